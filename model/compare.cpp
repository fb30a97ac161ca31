#include "compare.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

namespace zkpipe::model {

std::vector<MetricError> compare_summaries(const trace::TraceSummary& measured, const trace::TraceSummary& simulated) {
  std::map<std::string, double> predicted;
  for (const auto& [name, value] : trace::summary_metrics(simulated)) predicted[name] = value;
  std::vector<MetricError> errors;
  for (const auto& [name, value] : trace::summary_metrics(measured)) {
    const auto found = predicted.find(name);
    if (found == predicted.end()) continue;
    MetricError error{name, value, found->second, 0, "%"};
    if (name == "gpu_utilization") {
      error.error = 100 * (found->second - value);
      error.error_unit = "points";
    } else {
      error.error = value != 0 ? 100 * (found->second - value) / std::abs(value) : (found->second == 0 ? 0 : INFINITY);
    }
    errors.push_back(std::move(error));
  }
  return errors;
}

std::string format_comparison(const std::vector<MetricError>& errors) {
  std::string text = fmt::format("{:<22} {:>14} {:>14} {:>12}\n", "metric", "measured", "simulated", "error");
  for (const MetricError& error : errors)
    text += fmt::format("{:<22} {:>14.6g} {:>14.6g} {:>+9.2f} {}\n", error.metric, error.measured, error.simulated,
                        error.error, error.error_unit == "%" ? "% " : "pt");
  return text;
}

}  // namespace zkpipe::model
