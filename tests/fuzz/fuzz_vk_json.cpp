// libFuzzer target: read_verifying_key_json() (snarkjs's verification_key.json) on arbitrary bytes. Any input must end in
// a verifying key or a zk::Error; a crash, hang, leak or out-of-bounds read is a bug.
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/util/error.hpp"
#include "fuzz_input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    zk::groth16::read_verifying_key_json(fuzz_input_file(data, size, "verification_key.json"));
  } catch (const zk::Error&) {
  }
  return 0;
}
