#include "summary.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace zkpipe::trace {

std::vector<std::pair<double, double>> interval_union(std::vector<std::pair<double, double>> intervals) {
  std::ranges::sort(intervals);
  std::vector<std::pair<double, double>> disjoint;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (!disjoint.empty() && start <= disjoint.back().second)
      disjoint.back().second = std::max(disjoint.back().second, end);
    else
      disjoint.emplace_back(start, end);
  }
  return disjoint;
}

double median(std::vector<double> values) {
  const std::size_t middle = values.size() / 2;
  std::ranges::nth_element(values, values.begin() + middle);
  if (values.size() % 2 == 1) return values[middle];
  const double upper = values[middle];
  const double lower = *std::max_element(values.begin(), values.begin() + middle);
  return (lower + upper) / 2;
}

namespace {

// Partitions completed per second between the first completion and the last: (N - 1) / span, 0
// with fewer than two completions or none apart.
double steady_partitions_per_s(const std::map<std::pair<std::string, std::uint32_t>, double>& completed) {
  if (completed.size() < 2) return 0;
  const auto [first, last] = std::ranges::minmax_element(completed, {}, [](const auto& done) { return done.second; });
  const double first_done_s = first->second, last_done_s = last->second;
  return last_done_s > first_done_s ? double(completed.size() - 1) / (last_done_s - first_done_s) : 0;
}

// Each GPU's busy time (the union of its kernel intervals) over the window from its first kernel's
// start to its last one's end; GPUs whose window is empty are left out.
std::map<std::string, double> gpu_utilization_by_gpu(
    std::map<std::string, std::vector<std::pair<double, double>>> compute_by_gpu) {
  std::map<std::string, double> utilization;
  for (auto& [gpu, intervals] : compute_by_gpu) {
    const double window_begin_s = std::ranges::min(intervals, {}, &std::pair<double, double>::first).first;
    const double window_end_s = std::ranges::max(intervals, {}, &std::pair<double, double>::second).second;
    if (window_end_s <= window_begin_s) continue;
    double busy_s = 0;
    for (const auto& [start, end] : interval_union(std::move(intervals))) busy_s += end - start;
    utilization[gpu] = busy_s / (window_end_s - window_begin_s);
  }
  return utilization;
}

}  // namespace

TraceSummary summarize(std::span<const Span> spans) {
  TraceSummary summary;
  if (spans.empty()) return summary;
  double first_s = std::numeric_limits<double>::infinity();
  double last_s = -first_s;
  std::map<std::string, std::vector<std::pair<double, double>>> compute_by_gpu;
  std::map<Phase, std::vector<double>> durations;
  std::map<std::pair<std::string, std::uint32_t>, double> completed;  // partition -> completion time
  double h2d_time_s = 0;
  for (const Span& span : spans) {
    first_s = std::min(first_s, span.start_s);
    last_s = std::max(last_s, span.end_s);
    durations[span.phase].push_back(span.duration_s());
    if (is_gpu_kernel(span)) compute_by_gpu[gpu_of_resource(span.resource)].emplace_back(span.start_s, span.end_s);
    switch (span.phase) {
      case Phase::h2d:
        if (span.items == 0) break;  // not a/b/c: SRS bases, or a copy that moved nothing
        summary.h2d_bytes += span.bytes;
        h2d_time_s += span.duration_s();
        break;
      case Phase::wait_pool: summary.wait_pool_s += span.duration_s(); break;
      case Phase::wait_budget: summary.wait_budget_s += span.duration_s(); break;
      case Phase::assemble:
      case Phase::verify: {
        double& done_s = completed.try_emplace({span.run, span.partition}, span.end_s).first->second;
        done_s = std::max(done_s, span.end_s);
        break;
      }
      default: break;
    }
  }
  summary.makespan_s = last_s - first_s;
  summary.partitions_completed = completed.size();
  if (summary.makespan_s > 0) {
    summary.partitions_per_s = double(completed.size()) / summary.makespan_s;
  }
  summary.steady_partitions_per_s = steady_partitions_per_s(completed);
  summary.gpu_utilization_by_gpu = gpu_utilization_by_gpu(std::move(compute_by_gpu));
  for (const auto& [gpu, utilization] : summary.gpu_utilization_by_gpu)
    summary.gpu_utilization += utilization / double(summary.gpu_utilization_by_gpu.size());
  if (h2d_time_s > 0) summary.h2d_gbps = double(summary.h2d_bytes) / h2d_time_s / 1e9;
  for (Phase phase : all_phases) {
    const auto found = durations.find(phase);
    if (found == durations.end()) continue;
    double total_s = 0;
    for (double d : found->second) total_s += d;
    summary.phases.push_back({phase, found->second.size(), median(found->second), total_s});
  }
  return summary;
}

std::vector<std::pair<std::string, double>> summary_metrics(const TraceSummary& summary) {
  std::vector<std::pair<std::string, double>> metrics = {
      {"makespan_s", summary.makespan_s},
      {"partitions_per_s", summary.partitions_per_s},
      {"steady_partitions_per_s", summary.steady_partitions_per_s},
      {"gpu_utilization", summary.gpu_utilization},
      {"h2d_gbps", summary.h2d_gbps},
      {"wait_pool_s", summary.wait_pool_s},
      {"wait_budget_s", summary.wait_budget_s}};
  for (const PhaseStatistics& phase : summary.phases)
    metrics.emplace_back(fmt::format("median_{}_s", phase_name(phase.phase)), phase.median_s);
  return metrics;
}

std::string format_summary(const TraceSummary& summary, ComputeDevice device) {
  const std::string_view utilization_label = device == ComputeDevice::gpu   ? "GPU utilization"
                                             : device == ComputeDevice::cpu ? "CPU utilization"
                                                                            : "fake device utilization";
  std::string text = fmt::format(
      "partitions completed {}  in {:.3f} s  ({:.3f} partitions/s; {:.3f}/s between first and last)\n"
      "{:<20} {:.1f} %\n"
      "{:<20} {:.2f} GB/s ({:.2f} GB copied)\n"
      "waits                pool {:.3f} s, budget {:.3f} s\n",
      summary.partitions_completed, summary.makespan_s, summary.partitions_per_s, summary.steady_partitions_per_s,
      utilization_label, 100 * summary.gpu_utilization, device == ComputeDevice::gpu ? "a/b/c H2D" : "a/b/c copy",
      summary.h2d_gbps, double(summary.h2d_bytes) / 1e9,
      summary.wait_pool_s, summary.wait_budget_s);
  if (device == ComputeDevice::gpu)
    for (const auto& [gpu, utilization] : summary.gpu_utilization_by_gpu)
      text += fmt::format("  {:<18} {:.1f} %\n", gpu, 100 * utilization);
  text += "phase            spans   median_s    total_s\n";
  for (const PhaseStatistics& phase : summary.phases)
    text += fmt::format("{:<14} {:>7} {:>10.4f} {:>10.3f}\n", phase_name(phase.phase), phase.spans,
                        phase.median_s, phase.total_s);
  return text;
}

}  // namespace zkpipe::trace
