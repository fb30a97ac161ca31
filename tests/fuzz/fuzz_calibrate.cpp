// libFuzzer target: fit_traces() (`zkpipe calibrate`) on a trace CSV of arbitrary bytes, beside a
// fixed sidecar of a pageable two-worker H200 run (ZKPIPE_FUZZ_SIDECAR), then the calibration's
// TOML and report. Any input must end in a calibration or a runtime error naming what is wrong; a
// crash, hang, leak or out-of-bounds read is a bug.
#include <filesystem>
#include <stdexcept>

#include "calibration.hpp"
#include "fuzz_input_file.hpp"
#include "trace/sidecar.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path trace = fuzz_input_file(data, size, "trace.csv");
  static const bool sidecar_copied = std::filesystem::copy_file(
      ZKPIPE_FUZZ_SIDECAR, zkpipe::trace::sidecar_path_for(trace), std::filesystem::copy_options::overwrite_existing);
  (void)sidecar_copied;
  try {
    const zkpipe::model::CalibrationFit fit = zkpipe::model::fit_traces({trace});
    zkpipe::model::calibration_toml(fit, "fuzz");
    zkpipe::model::format_fit_reports(fit.reports);
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
