// Contract: the error of a prediction against a measurement, per summary metric: points of
// utilization for gpu_utilization, relative percent for every other figure. Both traces are
// summarized by the one trace::summarize, so the comparison is like for like. Several runs are
// tabulated one per row with the mean absolute error of each headline metric.
#pragma once

#include <string>
#include <vector>

#include "trace/summary.hpp"

namespace zkpipe::model {

struct MetricError {
  std::string metric;
  double measured = 0;
  double simulated = 0;
  double error = 0;          // simulated - measured, in points (utilization) or percent
  std::string error_unit;    // "points" or "%"
};

std::vector<MetricError> compare_summaries(const trace::TraceSummary& measured, const trace::TraceSummary& simulated);
std::string format_comparison(const std::vector<MetricError>& errors);

struct ComparedRun {
  std::string name;  // the measured trace
  std::vector<MetricError> errors;
};

// One row per run (throughput error %, utilization error in points, H2D error %), then the mean
// absolute error of each over the runs: how a calibration predicts the runs it was not fitted on.
std::string format_comparison_of_runs(const std::vector<ComparedRun>& runs);

}  // namespace zkpipe::model
