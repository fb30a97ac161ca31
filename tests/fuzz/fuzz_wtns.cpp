// libFuzzer target: read_witness() on arbitrary bytes. Any input must end in a value or a
// zk::Error; a crash, hang, leak or out-of-bounds read is a bug (ASan + UBSan).
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/circom/wtns_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    zk::circom::read_witness(zk::circom::BinFile::from_bytes(
        "fuzz.wtns", std::string(reinterpret_cast<const char*>(data), size), zk::circom::wtns_magic,
        zk::circom::wtns_version));
  } catch (const zk::Error&) {
  }
  return 0;
}
