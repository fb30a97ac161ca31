// libFuzzer target: parse_scenario_text() on arbitrary bytes, as a scenario file in scenarios/
// (so `calibration = "calibration/..."` includes the committed files), sweeps expanded. Any input
// must end in a scenario or a ScenarioError; a crash, hang, leak, unbounded allocation or
// out-of-bounds read is a bug.
#include <string_view>

#include "scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    zkpipe::model::parse_scenario_text(std::string_view(reinterpret_cast<const char*>(data), size),
                                       "fuzz.toml", ZKPIPE_SCENARIOS_DIR);
  } catch (const zkpipe::model::ScenarioError&) {
  }
  return 0;
}
