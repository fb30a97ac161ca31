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

// Named scalar figures of a summary, in a fixed order: what `compare` and `sweep` tabulate.
std::vector<std::pair<std::string, double>> summary_metrics(const TraceSummary& summary);

// A human-readable block of the summary, one figure per line. `utilization_label` names the
// compute utilization figure: "GPU utilization" for GPUs, "device utilization" where the
// engine's workers compute on another backend (cpu, fake).
std::string format_summary(const TraceSummary& summary, std::string_view utilization_label = "GPU utilization");

}  // namespace zkpipe::trace
