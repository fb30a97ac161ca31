// report_data: the figures the report page draws, computed from the spans (report.hpp).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "compare.hpp"
#include "report.hpp"
#include "trace/summary.hpp"

namespace zkpipe::model {

namespace {

using nlohmann::json;
using Interval = std::pair<double, double>;

// GPU busy is binned over this many bins of the run's makespan (the busy fraction of each bin).
constexpr int gpu_busy_bins = 200;

// Resources in display order: GPU workers, PCIe, then CPU threads (numerically).
std::vector<std::string> ordered_resources(const trace::Trace& spans) {
  std::set<std::string> names;
  for (const trace::Span& span : spans) names.insert(span.resource);
  std::vector<std::string> ordered(names.begin(), names.end());
  auto rank = [](const std::string& name) {
    const int group = name.starts_with("gpu") ? 0 : name.starts_with("pcie") ? 1 : 2;
    const auto colon = name.find(':');
    int number = 0;
    if (colon != std::string::npos && colon + 1 < name.size()) {
      const std::string tail = name.substr(colon + 1);
      number = std::isdigit(static_cast<unsigned char>(tail.front())) ? std::atoi(tail.c_str()) : -1;
    }
    return std::tuple(group, name.substr(0, colon), number, name);
  };
  std::ranges::sort(ordered, {}, rank);
  return ordered;
}

// Each span as [lane, start, end, phase index, partition, attempt (-1: unknown), bytes, items].
json timeline_json(const trace::Trace& spans, double begin_s) {
  const std::vector<std::string> lanes = ordered_resources(spans);
  std::map<std::string, std::size_t> lane_of;
  for (std::size_t i = 0; i < lanes.size(); ++i) lane_of[lanes[i]] = i;
  json rows = json::array();
  for (const trace::Span& span : spans)
    rows.push_back({lane_of.at(span.resource), span.start_s - begin_s, span.end_s - begin_s, std::size_t(span.phase),
                    span.partition, span.attempt ? long(*span.attempt) : -1L, span.bytes, span.items});
  return {{"lanes", lanes}, {"spans", std::move(rows)}};
}

// Every host-to-device copy at its own rate: [start, end, GB/s, kind (0: a/b/c, 1: an upload
// without items, the witness or key points), partition, bytes].
json copies_json(const trace::Trace& spans, double begin_s) {
  json copies = json::array();
  for (const trace::Span& span : spans) {
    if (span.phase != trace::Phase::h2d || span.duration_s() <= 0) continue;
    copies.push_back({span.start_s - begin_s, span.end_s - begin_s, double(span.bytes) / span.duration_s() / 1e9,
                      span.items > 0 ? 0 : 1, span.partition, span.bytes});
  }
  return copies;
}

// Per GPU, the fraction of each bin during which one of its kernels ran.
json gpu_busy_json(const trace::Trace& spans, double begin_s, double makespan_s) {
  std::map<std::string, std::vector<Interval>> kernels_of_gpu;
  for (const trace::Span& span : spans)
    if (trace::is_gpu_compute(span.phase))
      kernels_of_gpu[trace::gpu_of_resource(span.resource)].emplace_back(span.start_s - begin_s, span.end_s - begin_s);
  const double bin_s = std::max(makespan_s, 1e-12) / gpu_busy_bins;
  json gpus = json::array();
  for (const auto& [gpu, kernels] : kernels_of_gpu) {
    std::vector<double> busy_s(gpu_busy_bins, 0.0);
    for (const auto& [start_s, end_s] : trace::interval_union(kernels))
      for (int bin = std::max(0, int(start_s / bin_s)); bin < gpu_busy_bins && bin * bin_s < end_s; ++bin)
        busy_s[std::size_t(bin)] += std::max(0.0, std::min(end_s, (bin + 1) * bin_s) - std::max(start_s, bin * bin_s));
    for (double& busy : busy_s) busy = std::min(1.0, busy / bin_s);
    gpus.push_back({{"gpu", gpu}, {"busy", std::move(busy_s)}});
  }
  return {{"bin_s", bin_s}, {"gpus", std::move(gpus)}};
}

// How many partitions wait in `phase` over time: a step function as [time, count] points.
json waiting_json(const trace::Trace& spans, trace::Phase phase, double begin_s, double makespan_s) {
  std::vector<std::pair<double, int>> changes;
  for (const trace::Span& span : spans)
    if (span.phase == phase && span.duration_s() > 0) {
      changes.emplace_back(span.start_s - begin_s, +1);
      changes.emplace_back(span.end_s - begin_s, -1);
    }
  std::ranges::sort(changes);
  json points = json::array({json::array({0.0, 0})});
  int waiting = 0;
  for (const auto& [time_s, change] : changes) points.push_back({time_s, waiting += change});
  points.push_back({makespan_s, 0});
  return points;
}

// Per phase present: spans, the partitions it ran for, total seconds and seconds per partition.
json phases_json(const trace::Trace& spans, const trace::TraceSummary& summary) {
  json phases = json::array();
  for (const trace::PhaseStatistics& statistics : summary.phases) {
    std::set<std::uint32_t> partitions;
    for (const trace::Span& span : spans)
      if (span.phase == statistics.phase) partitions.insert(span.partition);
    phases.push_back({{"phase", std::size_t(statistics.phase)}, {"spans", statistics.spans},
                      {"partitions", partitions.size()}, {"total_s", statistics.total_s},
                      {"per_partition_s", statistics.total_s / double(std::max<std::size_t>(1, partitions.size()))}});
  }
  return phases;
}

json run_json(const ReportRun& run) {
  if (run.spans.empty()) throw std::runtime_error(fmt::format("{}: the trace has no spans: nothing to report", run.label));
  const trace::TraceSummary summary = trace::summarize(run.spans);
  const double begin_s = std::ranges::min(run.spans, {}, &trace::Span::start_s).start_s;
  return {{"label", run.label},
          {"source", trace::source_name(run.spans.front().source)},
          {"summary", trace::format_summary(summary)},
          {"makespan_s", summary.makespan_s},
          {"gpu_utilization", summary.gpu_utilization},
          {"h2d_gbps", summary.h2d_gbps},
          {"wait_pool_s", summary.wait_pool_s},
          {"wait_budget_s", summary.wait_budget_s},
          {"timeline", timeline_json(run.spans, begin_s)},
          {"copies", copies_json(run.spans, begin_s)},
          {"gpu_busy", gpu_busy_json(run.spans, begin_s, summary.makespan_s)},
          {"waiting", {{"wait_pool", waiting_json(run.spans, trace::Phase::wait_pool, begin_s, summary.makespan_s)},
                       {"wait_budget", waiting_json(run.spans, trace::Phase::wait_budget, begin_s, summary.makespan_s)}}},
          {"phases", phases_json(run.spans, summary)}};
}

json comparison_json(const trace::Trace& measured, const trace::Trace& simulated) {
  json rows = json::array();
  for (const MetricError& error : compare_summaries(trace::summarize(measured), trace::summarize(simulated)))
    rows.push_back({{"metric", error.metric}, {"measured", error.measured}, {"simulated", error.simulated},
                    {"error", error.error}, {"unit", error.error_unit}});
  return rows;
}

// A markdown table's cells, without the outer pipes; empty for a line that is no table row.
std::vector<std::string> table_cells(std::string_view line) {
  if (!line.starts_with('|')) return {};
  std::vector<std::string> cells;
  std::string_view rest = line.substr(1);
  for (std::size_t bar; (bar = rest.find('|')) != std::string_view::npos; rest = rest.substr(bar + 1)) {
    std::string_view cell = rest.substr(0, bar);
    while (!cell.empty() && cell.front() == ' ') cell.remove_prefix(1);
    while (!cell.empty() && cell.back() == ' ') cell.remove_suffix(1);
    cells.emplace_back(cell);
  }
  return cells;
}

// validation.md: its table (header, rows) and its other lines (notes), in order.
json validation_json(const std::string& markdown) {
  json header = json::array(), rows = json::array(), notes = json::array();
  std::size_t start = 0;
  while (start < markdown.size()) {
    const std::size_t end = std::min(markdown.find('\n', start), markdown.size());
    const std::string_view line(markdown.data() + start, end - start);
    start = end + 1;
    const std::vector<std::string> cells = table_cells(line);
    const bool separator = !cells.empty() && line.find_first_not_of("|-: ") == std::string_view::npos;
    if (cells.empty()) {
      if (!line.empty()) notes.push_back(std::string(line));
    } else if (header.empty()) {
      header = cells;
    } else if (!separator) {
      rows.push_back(cells);
    }
  }
  if (header.empty()) throw std::runtime_error("the validation file has no table: give the validation.md that zkpipe validate writes");
  return {{"header", std::move(header)}, {"rows", std::move(rows)}, {"notes", std::move(notes)}};
}

// The sweep's grid (threads x slabs, both with the measured points' values) and its cells
// [thread index, slab index, utilization %], the measured points [thread index, slab index, %, name].
json heatmap_json(const SweepTable& sweep, const std::vector<MeasuredPoint>& measured) {
  const std::size_t threads_column = sweep.column("policy.synthesis_threads");
  const std::size_t slabs_column = sweep.column("policy.pool_slabs");
  const std::size_t utilization_column = sweep.column("gpu_utilization");
  std::set<long> threads, slabs;
  std::map<std::pair<long, long>, double> utilization;  // last row wins where other keys were swept too
  for (const auto& row : sweep.rows) {
    const long t = std::stol(row[threads_column]), s = std::stol(row[slabs_column]);
    threads.insert(t);
    slabs.insert(s);
    utilization[{t, s}] = std::stod(row[utilization_column]);
  }
  for (const MeasuredPoint& point : measured) {
    threads.insert(point.synthesis_threads);
    slabs.insert(point.pool_slabs);
  }
  auto index_of = [](const std::set<long>& values, long value) { return std::distance(values.begin(), values.find(value)); };
  json cells = json::array(), marks = json::array();
  for (const auto& [key, value] : utilization) cells.push_back({index_of(threads, key.first), index_of(slabs, key.second), 100 * value});
  for (const MeasuredPoint& point : measured)
    marks.push_back({index_of(threads, point.synthesis_threads), index_of(slabs, point.pool_slabs), 100 * point.gpu_utilization, point.name});
  return {{"threads", threads}, {"slabs", slabs}, {"cells", std::move(cells)}, {"measured", std::move(marks)}};
}

}  // namespace

std::optional<MeasuredPoint> heatmap_point(const std::string& name, const trace::Sidecar& sidecar, const trace::Trace& spans) {
  const policy::JobSettings& settings = sidecar.settings.job;
  if (sidecar.settings.copies_staging != policy::Staging::pinned || settings.synthesis_threads == 0 || settings.pool_slabs == 0)
    return std::nullopt;
  return MeasuredPoint{name, settings.synthesis_threads, settings.pool_slabs, trace::summarize(spans).gpu_utilization};
}

json report_data(const ReportInputs& inputs) {
  if (inputs.runs.empty()) throw std::runtime_error("no trace to report");
  json phases = json::array();
  for (trace::Phase phase : trace::all_phases)
    phases.push_back({{"name", trace::phase_name(phase)}, {"colour", phase_colour(std::size_t(phase))}});
  json runs = json::array();
  for (const ReportRun& run : inputs.runs) runs.push_back(run_json(run));
  json data = {{"title", inputs.title}, {"phases", std::move(phases)}, {"runs", std::move(runs)},
               {"gpu_busy_bins", gpu_busy_bins}, {"comparison", nullptr}, {"validation", nullptr}, {"heatmap", nullptr}};
  if (inputs.runs.size() == 2) data["comparison"] = comparison_json(inputs.runs[0].spans, inputs.runs[1].spans);
  if (inputs.validation_markdown) data["validation"] = validation_json(*inputs.validation_markdown);
  if (inputs.sweep) data["heatmap"] = heatmap_json(*inputs.sweep, inputs.measured_points);
  return data;
}

}  // namespace zkpipe::model
