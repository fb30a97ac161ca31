// Contract: the one summary of a trace, computed the same way for measured and simulated spans,
// so `prove`, `simulate` and `compare` print comparable figures. Pure function of the spans.
//   gpu_utilization   per GPU, the union of its GPU-compute spans / the time from its first
//                     compute start to its last compute end (the steady state: pipeline fill and
//                     drain, which dominate short runs, are excluded), averaged over GPUs
//   h2d_gbps          a/b/c bytes copied host-to-device / time spent copying them (GB = 1e9 B);
//                     a/b/c copies are the h2d spans with items (SRS copies carry none)
//   partitions_per_s  partitions with an assemble or verify span / makespan
//   steady_partitions_per_s  the rate between the first and the last completion (a partition
//                     completes at the end of its last assemble or verify span): (completed - 1)
//                     / that time, the pipeline's throughput without its fill; 0 below two
//   phase medians     median duration of each phase present
//   waits             total seconds spent in wait_pool and wait_budget
#pragma once

#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace.hpp"

namespace zkpipe::trace {

struct PhaseStatistics {
  Phase phase = Phase::synth;
  std::size_t spans = 0;
  double median_s = 0;
  double total_s = 0;
};

struct TraceSummary {
  double makespan_s = 0;
  std::size_t partitions_completed = 0;
  double partitions_per_s = 0;
  double steady_partitions_per_s = 0;
  double gpu_utilization = 0;
  std::map<std::string, double> gpu_utilization_by_gpu;
  double h2d_gbps = 0;
  std::uint64_t h2d_bytes = 0;
  double wait_pool_s = 0;
  double wait_budget_s = 0;
  std::vector<PhaseStatistics> phases;  // in schema order, phases absent from the trace omitted
};

TraceSummary summarize(std::span<const Span> spans);

// The union of `intervals` ([start, end] pairs, in any order): disjoint intervals in start order,
// those that overlap or touch merged into one; empty ones (end <= start) left out.
std::vector<std::pair<double, double>> interval_union(std::vector<std::pair<double, double>> intervals);

// The median of `values` (not empty): the mean of the middle two for an even count.
double median(std::vector<double> values);
// The upper median of `values` (not empty): the larger of the middle two for an even count.
template <typename T>
T upper_median(std::vector<T> values) {
  std::ranges::nth_element(values, values.begin() + std::ptrdiff_t(values.size() / 2));
  return values[values.size() / 2];
}

// Named scalar figures of a summary, in a fixed order: what `compare` and `sweep` tabulate.
std::vector<std::pair<std::string, double>> summary_metrics(const TraceSummary& summary);

// What the workers' compute spans ran on: GPUs, the host's CPU (the engine's cpu backend: one
// device, the host) or the engine's fake device (CPU maths, injected faults).
enum class ComputeDevice { gpu, cpu, fake };

// A human-readable block of the summary, one figure per line. The utilization figure is named
// after `device` ("GPU utilization", "CPU utilization", "fake device utilization"); GPUs also get
// a line each (gpu0, gpu1, ...), the CPU and the fake device, always one, none; the staging copy
// is "a/b/c H2D" to a GPU, "a/b/c copy" (host to host) otherwise.
std::string format_summary(const TraceSummary& summary, ComputeDevice device = ComputeDevice::gpu);

}  // namespace zkpipe::trace
