#include "compare.hpp"

#include <algorithm>
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

std::string format_comparison_of_runs(const std::vector<ComparedRun>& runs) {
  const std::vector<std::string> headline = {"partitions_per_s", "gpu_utilization", "h2d_gbps"};
  std::string text = fmt::format("{:<40} {:>18} {:>22} {:>12}\n", "run (measured trace)", "partitions/s err %",
                                 "GPU utilization err pt", "H2D err %");
  std::vector<double> absolute_sum(headline.size(), 0.0);
  for (const ComparedRun& run : runs) {
    text += fmt::format("{:<40}", run.name);
    for (std::size_t i = 0; i < headline.size(); ++i) {
      const auto found = std::ranges::find(run.errors, headline[i], &MetricError::metric);
      const double error = found == run.errors.end() ? NAN : found->error;
      absolute_sum[i] += std::abs(error);
      text += fmt::format(" {:>{}.2f}", error, i == 0 ? 18 : i == 1 ? 22 : 12);
    }
    text += "\n";
  }
  text += fmt::format("{:<40}", fmt::format("mean absolute error ({} runs)", runs.size()));
  for (std::size_t i = 0; i < headline.size(); ++i)
    text += fmt::format(" {:>{}.2f}", absolute_sum[i] / double(runs.size()), i == 0 ? 18 : i == 1 ? 22 : 12);
  return text + "\n";
}

std::string format_comparison(const std::vector<MetricError>& errors) {
  std::string text = fmt::format("{:<22} {:>14} {:>14} {:>12}\n", "metric", "measured", "simulated", "error");
  for (const MetricError& error : errors)
    text += fmt::format("{:<22} {:>14.6g} {:>14.6g} {:>+9.2f} {}\n", error.metric, error.measured, error.simulated,
                        error.error, error.error_unit == "%" ? "% " : "pt");
  return text;
}

}  // namespace zkpipe::model
