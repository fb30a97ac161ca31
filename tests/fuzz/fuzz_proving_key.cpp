// libFuzzer target: read_proving_key() on arbitrary bytes (a header may claim any count; every
// count must be checked against the file before anything is allocated). Any input must end in a
// key or a zk::Error; a crash, hang, leak, unbounded allocation or out-of-bounds read is a bug.
#include "engine/groth16/keys.hpp"
#include "engine/util/error.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    zk::groth16::read_proving_key(fuzz_input_file(data, size, "proving.key"));
  } catch (const zk::Error&) {
  }
  return 0;
}
