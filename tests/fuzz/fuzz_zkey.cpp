// libFuzzer target: ZkeyFile on arbitrary bytes, then proving_key() and evaluate_rows() with a
// zero witness (every buffer size is bounded by the file's own sections). Any input must end
// normally or in a zk::Error; a crash, hang, leak or out-of-bounds read is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/circom/zkey_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zk::circom;
  try {
    ZkeyFile zkey(BinFile::from_bytes("fuzz.zkey", std::string(reinterpret_cast<const char*>(data), size),
                                      zkey_magic, zkey_version));
    auto pk = zkey.proving_key();
    std::vector<Fr> z(pk.num_vars, Fr::zero()), a(pk.domain_size()), b(pk.domain_size()), c(pk.domain_size());
    zkey.evaluate_rows(z, a, b, c);
  } catch (const zk::Error&) {
  }
  return 0;
}
