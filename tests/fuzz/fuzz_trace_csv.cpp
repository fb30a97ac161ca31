// libFuzzer target: read_csv_text() on arbitrary bytes, then the summary and metrics of what it
// read (as `zkpipe compare` prints them for a user's trace). Any input must end in spans and a summary or a
// TraceError; a crash, hang, leak or out-of-bounds read is a bug.
#include <string_view>

#include "trace/summary.hpp"
#include "trace/trace_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    using namespace zkpipe::trace;
    const TraceSummary summary = summarize(read_csv_text("fuzz.csv", std::string_view(reinterpret_cast<const char*>(data), size)));
    summary_metrics(summary);
    format_summary(summary);
  } catch (const zkpipe::trace::TraceError&) {
  }
  return 0;
}
