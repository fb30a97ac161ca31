// libFuzzer target: read_sidecar() (a trace's trace.json) on arbitrary bytes. Any input must end
// in a sidecar or a TraceError; a crash, hang, leak or out-of-bounds read is a bug.
#include "fuzz_input_file.hpp"
#include "trace/sidecar.hpp"
#include "trace/trace_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    zkpipe::trace::read_sidecar(fuzz_input_file(data, size, "trace.json"));
  } catch (const zkpipe::trace::TraceError&) {
  }
  return 0;
}
