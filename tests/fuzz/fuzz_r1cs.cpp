// libFuzzer target: R1csFile on arbitrary bytes, then check_witness() with the all-zero witness,
// which satisfies every constraint, so the whole constraint section is parsed. Any input must
// end normally or in a zk::Error; a crash, hang, leak or out-of-bounds read is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/circom/r1cs_file.hpp"

namespace {
// A witness is as long as its .wtns file allows; the header alone may claim 2^32 wires.
constexpr uint32_t max_fuzz_wires = 1 << 16;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zk::circom;
  try {
    R1csFile r1cs(BinFile::from_bytes("fuzz.r1cs", std::string(reinterpret_cast<const char*>(data), size),
                                      r1cs_magic, r1cs_version));
    if (r1cs.header().num_wires <= max_fuzz_wires)
      r1cs.check_witness(std::vector<Fr>(r1cs.header().num_wires, Fr::zero()));
  } catch (const zk::Error&) {
  }
  return 0;
}
