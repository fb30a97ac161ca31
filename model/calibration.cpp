#include "calibration.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <sstream>

#include <Eigen/Dense>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <libfccp/csv.h>

#include "gpu_kernels.hpp"
#include "trace/sidecar.hpp"
#include "trace/summary.hpp"
#include "trace/trace_csv.hpp"
#include "trace_attempts.hpp"

namespace zkpipe::model {

namespace {

// Sets the report's residuals, each y less predicted(its index), and their RMS.
template <class Predicted>
void add_residuals(FitReport& report, Predicted&& predicted) {
  double squares = 0;
  for (std::size_t i = 0; i < report.y.size(); ++i) {
    report.residuals.push_back(report.y[i] - predicted(i));
    squares += report.residuals.back() * report.residuals.back();
  }
  report.rms_residual = std::sqrt(squares / double(report.y.size()));
}

// Least squares y = sum_j c_j x^j, j <= min(max_degree, distinct x values - 1).
FitReport fit_polynomial(std::string name, std::string x_name, std::string y_name, std::vector<double> x,
                         std::vector<double> y, int max_degree) {
  if (x.empty()) throw std::runtime_error(fmt::format("fit {}: no data points", name));
  std::set<double> distinct(x.begin(), x.end());
  const int degree = std::min<int>(max_degree, int(distinct.size()) - 1);
  Eigen::MatrixXd design(Eigen::Index(x.size()), degree + 1);
  Eigen::VectorXd observed(Eigen::Index(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (int j = 0; j <= degree; ++j) design(Eigen::Index(i), j) = std::pow(x[i], j);
    observed(Eigen::Index(i)) = y[i];
  }
  const Eigen::VectorXd solution = design.colPivHouseholderQr().solve(observed);
  FitReport report{std::move(name), std::move(x_name), std::move(y_name), {}, std::move(x), std::move(y), {}, 0};
  report.coefficients.assign(std::size_t(max_degree) + 1, 0.0);
  for (int j = 0; j <= degree; ++j) report.coefficients[std::size_t(j)] = solution(j);
  add_residuals(report, [&](std::size_t i) { return design.row(Eigen::Index(i)).dot(solution); });
  return report;
}

H2dPathCost path_cost(const FitReport& report) {
  return {report.coefficients[0], report.coefficients[1], report.coefficients[2]};
}

// The synthesis spans of a run active at `time_s`.
std::uint32_t synthesizing_at(const std::vector<const trace::Span*>& synth_spans, double time_s) {
  return std::uint32_t(std::ranges::count_if(
      synth_spans, [&](const trace::Span* span) { return span->start_s <= time_s && time_s < span->end_s; }));
}

// Time-weighted number of synthesis spans of a run active during [start_s, end_s].
double mean_synthesizing(const std::vector<const trace::Span*>& synth_spans, double start_s, double end_s) {
  if (end_s <= start_s) return synthesizing_at(synth_spans, start_s);
  double overlap_s = 0;
  for (const trace::Span* span : synth_spans)
    overlap_s += std::max(0.0, std::min(end_s, span->end_s) - std::max(start_s, span->start_s));
  return overlap_s / (end_s - start_s);
}

// The mean over `span` of 1 / the cores the engine gave it (synthesis_cores_each): with the
// `threads` rule a constant, with the others it follows the spans of its run synthesizing with
// it (itself among them), segment by segment.
double mean_inverse_cores(const std::vector<const trace::Span*>& synth_spans, const trace::Span& span,
                          SynthesisCoreShare rule, std::uint32_t cores, std::uint32_t threads) {
  auto inverse = [&](std::uint32_t synthesizing) {
    return 1.0 / synthesis_cores_each(rule, cores, threads, synthesizing);
  };
  if (rule == SynthesisCoreShare::threads || span.end_s <= span.start_s)
    return inverse(synthesizing_at(synth_spans, span.start_s));
  std::vector<double> edges{span.start_s, span.end_s};
  for (const trace::Span* other : synth_spans)
    for (double edge : {other->start_s, other->end_s})
      if (span.start_s < edge && edge < span.end_s) edges.push_back(edge);
  std::ranges::sort(edges);
  double weighted = 0;
  for (std::size_t i = 0; i + 1 < edges.size(); ++i)
    weighted += (edges[i + 1] - edges[i]) * inverse(synthesizing_at(synth_spans, (edges[i] + edges[i + 1]) / 2));
  return weighted / (span.end_s - span.start_s);
}

// A constant fit (the median) reported like the polynomial fits: x is the sample's index.
FitReport median_report(std::string name, std::string y_name, std::vector<double> y) {
  const double median = trace::upper_median(y);
  FitReport report{std::move(name), "sample", std::move(y_name), {median}, {}, std::move(y), {}, 0};
  for (std::size_t i = 0; i < report.y.size(); ++i) report.x.push_back(double(i));
  add_residuals(report, [&](std::size_t) { return median; });
  return report;
}

// Assemblies seen, and how many of them overlapped the start of another partition's kernel on
// the same GPU (then the assembly did not hold the GPU's compute section).
struct AssemblyEvidence {
  std::size_t assemblies = 0, overlapped = 0;
};

void add_assembly_evidence(const trace::Trace& spans, AssemblyEvidence& evidence) {
  std::map<std::pair<std::string, std::uint32_t>, std::string> gpu_of_partition;
  std::map<std::string, std::vector<std::pair<double, std::uint32_t>>> kernel_starts;  // gpu -> (start, partition)
  for (const trace::Span& span : spans)
    if (trace::is_gpu_kernel(span)) {
      const std::string gpu = span.run + "/" + trace::gpu_of_resource(span.resource);
      gpu_of_partition[{span.run, span.partition}] = gpu;
      kernel_starts[gpu].emplace_back(span.start_s, span.partition);
    }
  for (auto& [gpu, starts] : kernel_starts) std::ranges::sort(starts);
  for (const trace::Span& span : spans) {
    if (span.phase != trace::Phase::assemble) continue;
    const auto gpu = gpu_of_partition.find({span.run, span.partition});
    if (gpu == gpu_of_partition.end()) continue;
    ++evidence.assemblies;
    const auto& starts = kernel_starts[gpu->second];
    for (auto it = std::ranges::lower_bound(starts, std::pair{span.start_s, std::uint32_t(0)});
         it != starts.end() && it->first < span.end_s; ++it)
      if (it->second != span.partition) {
        ++evidence.overlapped;
        break;
      }
  }
}

// The kernel spans that waited for another worker's copy to their GPU, each with the seconds it
// lasted beyond its phase's median in its run: spans that started while such a copy ran and lasted
// longer than the median by 5 ms, by half the median and by a third of what was left of the copy,
// at least. In the H200's pageable 2^24 runs with two and three workers (checks24-h200-20261203),
// about one msm_a in four that started during another worker's pageable copy (a/b/c or witness)
// ran on until that copy ended, then for its usual 54 ms; pinned runs show none. Those seconds are
// the copy's, not the kernel's. (A partition's first batch addition, 12 ms where the others take
// 3, passes too where it starts within 30 ms of a copy's end: a few such spans a run.)
std::map<const trace::Span*, double> kernels_that_waited_for_copies(const trace::Trace& spans) {
  std::map<std::pair<std::string, trace::Phase>, std::vector<double>> durations;
  std::map<std::pair<std::string, std::string>, std::vector<const trace::Span*>> copies;  // (run, link)
  for (const trace::Span& span : spans) {
    if (trace::is_gpu_kernel(span)) durations[{span.run, span.phase}].push_back(span.duration_s());
    if (span.phase == trace::Phase::h2d) copies[{span.run, span.resource}].push_back(&span);
  }
  std::map<std::pair<std::string, trace::Phase>, double> typical;
  for (const auto& [run_phase, phase_durations] : durations) typical[run_phase] = trace::upper_median(phase_durations);
  std::map<const trace::Span*, double> waited;
  for (const trace::Span& span : spans) {
    if (!trace::is_gpu_kernel(span)) continue;
    const double typical_s = typical[{span.run, span.phase}];
    const std::string link = "pcie" + trace::gpu_of_resource(span.resource).substr(3) + ":h2d";
    for (const trace::Span* copy : copies[{span.run, link}]) {
      const double copy_left_s = copy->end_s - span.start_s, beyond_s = span.duration_s() - typical_s;
      if (copy->worker != span.worker && copy->start_s < span.start_s && copy_left_s > 0 &&
          beyond_s >= std::max({0.005, typical_s / 2, copy_left_s / 3})) {
        waited[&span] = beyond_s;
        break;
      }
    }
  }
  return waited;
}

// A kernel span over a streamed key: its items, its duration, and the chunks copied inside it
// (the itemless h2d spans of its partition that start in it), in start order.
struct StreamedKernel {
  std::uint64_t items = 0;
  double duration_s = 0;
  std::vector<double> chunk_bytes, copy_s;
};

StreamedKernel streamed_kernel(const trace::Span& kernel, const std::vector<const trace::Span*>& copies) {
  StreamedKernel streamed{kernel.items, kernel.duration_s(), {}, {}};
  std::vector<const trace::Span*> chunks;
  for (const trace::Span* copy : copies)
    if (copy->start_s >= kernel.start_s && copy->start_s < kernel.end_s) chunks.push_back(copy);
  std::ranges::stable_sort(chunks, {}, &trace::Span::start_s);
  for (const trace::Span* chunk : chunks) {
    streamed.chunk_bytes.push_back(double(chunk->bytes));
    streamed.copy_s.push_back(chunk->duration_s());
  }
  return streamed;
}

// The kernel's duration as the model runs it (streamed_kernel_s) with its measured copies, the
// seconds `kernel_s` shared among its chunks by bytes (by points: a kernel's chunks are of one
// curve), each chunk costing chunk_s more.
double modelled_duration_s(const StreamedKernel& kernel, double kernel_s, double chunk_s) {
  const double bytes = std::accumulate(kernel.chunk_bytes.begin(), kernel.chunk_bytes.end(), 0.0);
  std::vector<double> work_s;
  for (double chunk : kernel.chunk_bytes) work_s.push_back(kernel_s * chunk / bytes + chunk_s);
  return streamed_kernel_s(work_s, kernel.copy_s);
}

// The x in [lo, hi] at which the increasing `f` reaches `target` (by bisection; lo or hi where it
// does not reach it within).
template <class F>
double solve_increasing(F&& f, double target, double lo, double hi) {
  for (int step = 0; step < 100; ++step) {
    const double middle = (lo + hi) / 2;
    (f(middle) < target ? lo : hi) = middle;
  }
  return (lo + hi) / 2;
}

// A GPU phase's cost fitted from (million items, seconds): items that vary by less than 10 % (one
// circuit at one size: partitions differ by a few scalars) do not identify a slope, only noise: a
// constant is fitted. More items never cost less: a negative slope is refitted as a constant too.
// The cost goes into `fit`, with its report.
void fit_phase_cost(trace::Phase phase, const std::string& note, std::vector<double> mitems, std::vector<double> seconds,
                    CalibrationFit& fit) {
  const auto [fewest, most] = std::ranges::minmax(mitems);
  const bool spread = most - fewest >= 0.1 * std::abs(most);
  FitReport report = fit_polynomial(
      fmt::format("gpu_phase_cost.{}{}{}", trace::phase_name(phase), spread ? "" : " (items within 10 %: a constant)", note),
      "mitems", "seconds", mitems, seconds, spread ? 1 : 0);
  if (report.coefficients.size() > 1 && report.coefficients[1] < 0)
    report = fit_polynomial(
        fmt::format("gpu_phase_cost.{} (negative slope refitted as a constant){}", trace::phase_name(phase), note),
        "mitems", "seconds", std::move(mitems), std::move(seconds), 0);
  report.coefficients.resize(2, 0.0);
  fit.gpu_phase_cost[phase] = {report.coefficients[0], report.coefficients[1], std::nullopt};
  fit.reports.push_back(std::move(report));
}

}  // namespace

std::vector<H2dBenchmarkRow> read_h2d_benchmark(const std::filesystem::path& csv) {
  std::vector<H2dBenchmarkRow> rows;
  try {
    io::CSVReader<4, io::trim_chars<' ', '\t'>, io::no_quote_escape<','>, io::throw_on_overflow,
                  io::single_line_comment<'#'>>
        reader(csv.string());
    reader.read_header(io::ignore_no_column, "mode", "thrash_threads", "h2d_GBps", "thrash_GBps");
    H2dBenchmarkRow row;
    double thrash_gbps = 0;
    while (reader.read_row(row.mode, row.thrash_threads, row.h2d_gbps, thrash_gbps)) {
      if (row.mode != "pinned" && row.mode != "registered" && row.mode != "pageable")
        throw std::runtime_error(fmt::format("{}:{}: mode '{}' is not pinned, registered or pageable", csv.string(),
                                             reader.get_file_line(), row.mode));
      if (!(row.h2d_gbps > 0))
        throw std::runtime_error(fmt::format("{}:{}: h2d_GBps must be > 0", csv.string(), reader.get_file_line()));
      rows.push_back(row);
    }
  } catch (const io::error::base& error) {
    throw std::runtime_error(fmt::format("{}: {} (expected columns mode,thrash_threads,h2d_GBps,thrash_GBps)",
                                         csv.string(), error.what()));
  }
  if (rows.empty()) throw std::runtime_error(csv.string() + ": no measurements");
  return rows;
}

double idle_pinned_gbps(const std::vector<H2dBenchmarkRow>& rows) {
  double best = 0;
  for (const H2dBenchmarkRow& row : rows)
    if (row.mode != "pageable" && row.thrash_threads == 0) best = std::max(best, row.h2d_gbps);
  if (best == 0) throw std::runtime_error("H2D benchmark has no pinned row at 0 threads: give the link rate");
  return best;
}

CalibrationFit fit_h2d_benchmark(const std::vector<H2dBenchmarkRow>& rows, std::optional<double> link_gbps) {
  const double link = link_gbps ? *link_gbps : idle_pinned_gbps(rows);
  CalibrationFit fit;
  for (const bool pinned : {true, false}) {
    std::vector<double> threads, s_per_gb;
    for (const H2dBenchmarkRow& row : rows) {
      if ((row.mode != "pageable") != pinned) continue;
      threads.push_back(row.thrash_threads);
      s_per_gb.push_back(1 / row.h2d_gbps - 1 / link);
    }
    if (threads.empty()) continue;
    FitReport report = fit_polynomial(pinned ? "h2d.pinned" : "h2d.pageable", "loading_threads",
                                      "s_per_gb_above_link", threads, s_per_gb, 2);
    (pinned ? fit.h2d_pinned : fit.h2d_pageable) = path_cost(report);
    fit.reports.push_back(std::move(report));
  }
  fit.synth_memory_load_threads = 1.0;
  return fit;
}

namespace {

// The kernel spans of pageable runs that waited for another worker's copy (left out of their
// phase's cost), and their seconds beyond their phase's median.
struct CopyWaits {
  std::size_t spans = 0;
  double beyond_s = 0;
};

// A worker's host work as a span measured it, beside the syntheses running meanwhile.
struct HostWorkSpan {
  trace::Phase phase;
  double synthesizing;  // the time-weighted mean over the span
  double seconds;
};

// What the traces say of each cost the model asks for, before any fit.
struct TraceEvidence {
  using Points = std::pair<std::vector<double>, std::vector<double>>;  // (x, y)
  std::map<trace::Phase, Points> phase_points;                         // (million items, seconds)
  std::map<trace::Phase, std::vector<StreamedKernel>> streamed;  // kernels over a streamed key, with their chunks
  std::map<trace::Phase, std::size_t> untraced_streams;          // ... and without: left out
  std::map<trace::Phase, CopyWaits> copy_waits;                  // kernels that waited for a pageable copy: left out
  std::vector<double> synth_extra_threads, synth_s_per_mconstraint;
  std::vector<double> synth_inverse_cores;  // per synthesis span: the mean of 1 / its cores
  std::map<bool, Points> h2d_points;        // pinned? -> (synthesizing threads, s/GB above the link)
  std::vector<double> section_idle_s, split_s;
  std::vector<HostWorkSpan> host_work;  // assembly, verification and witness split spans
  AssemblyEvidence assembly;
};

// The sidecar beside `trace_csv`; it must state the copies' staging and the link's rate.
trace::Sidecar calibration_sidecar(const std::filesystem::path& trace_csv) {
  const std::filesystem::path path = trace::sidecar_path_for(trace_csv);
  if (!std::filesystem::exists(path))
    throw std::runtime_error(fmt::format("{}: no sidecar {} stating staging and PCIe rate; write it next to the trace",
                                         trace_csv.string(), path.string()));
  trace::Sidecar sidecar = trace::read_sidecar(path);
  if (!sidecar.settings.copies_staging || sidecar.machine.pcie_h2d_gbps.value_or(0.0) <= 0)
    throw std::runtime_error(
        fmt::format("{}: needs settings.staging (pinned|pageable) and machine.pcie_h2d_gbps", path.string()));
  return sidecar;
}

// A kernel span's evidence. A kernel over a streamed key copies the key's chunks inside its span:
// with their copies traced, it is a streamed kernel; without (traces before 2026-12-03), its
// copies cannot be told from its work and it is left out. One that waited for another worker's
// pageable copy, `waited_beyond_s` beyond its phase's median, is left out too. The others are
// points of their phase's cost.
void add_kernel_evidence(const trace::Span& span, const std::vector<const trace::Span*>& partition_copies,
                         std::optional<double> waited_beyond_s, bool streams_key, TraceEvidence& evidence) {
  StreamedKernel kernel = streamed_kernel(span, partition_copies);
  if (!kernel.copy_s.empty()) {
    evidence.streamed[span.phase].push_back(std::move(kernel));
  } else if (streams_key && span.phase != trace::Phase::ntt) {
    ++evidence.untraced_streams[span.phase];
  } else if (waited_beyond_s) {
    ++evidence.copy_waits[span.phase].spans;
    evidence.copy_waits[span.phase].beyond_s += *waited_beyond_s;
  } else {
    evidence.phase_points[span.phase].first.push_back(double(span.items) / 1e6);
    evidence.phase_points[span.phase].second.push_back(span.duration_s());
  }
}

// Adds one trace's spans to the evidence, each to the cost it measures.
void gather_evidence(const std::filesystem::path& trace_csv, TraceEvidence& evidence) {
  trace::Trace spans = trace::read_csv_file(trace_csv);
  std::ranges::stable_sort(spans, {}, &trace::Span::start_s);  // time factors in the order syntheses started
  const trace::Sidecar sidecar = calibration_sidecar(trace_csv);
  const bool pinned = sidecar.settings.copies_staging == policy::Staging::pinned;
  const double link_gbps = *sidecar.machine.pcie_h2d_gbps;
  const SynthesisCoreShare core_share = sidecar.settings.synthesis_core_share;
  const std::uint32_t cores = sidecar.machine.cores.value_or(1);
  const std::uint32_t threads = std::max(1u, sidecar.settings.job.synthesis_threads);
  const bool streams_key = sidecar.settings.job.srs_residency == policy::SrsResidency::pinned_host;
  const auto copies = copies_by_partition(spans, true);
  const auto waited = pinned ? std::map<const trace::Span*, double>{} : kernels_that_waited_for_copies(spans);
  for (double idle_s : compute_section_idle_s(spans)) evidence.section_idle_s.push_back(idle_s);
  for (double gap_s : witness_split_s(spans)) evidence.split_s.push_back(gap_s);
  add_assembly_evidence(spans, evidence.assembly);
  std::map<std::string, std::vector<const trace::Span*>> synth_by_run;
  for (const trace::Span& span : spans)
    if (span.phase == trace::Phase::synth) synth_by_run[span.run].push_back(&span);
  for (const trace::Span& span : spans) {
    const auto& synth_spans = synth_by_run[span.run];
    if (trace::is_gpu_kernel(span)) {
      const auto partition_copies = copies.find({span.run, span.partition});
      const auto wait = waited.find(&span);
      add_kernel_evidence(span, partition_copies == copies.end() ? std::vector<const trace::Span*>{} : partition_copies->second,
                          wait == waited.end() ? std::nullopt : std::optional(wait->second), streams_key, evidence);
    } else if (span.phase == trace::Phase::synth && span.items > 0) {
      evidence.synth_extra_threads.push_back(mean_synthesizing(synth_spans, span.start_s, span.end_s) - 1);
      evidence.synth_s_per_mconstraint.push_back(span.duration_s() / (double(span.items) / 1e6));
      evidence.synth_inverse_cores.push_back(mean_inverse_cores(synth_spans, span, core_share, cores, threads));
    } else if (span.phase == trace::Phase::h2d && span.items > 0 && span.bytes > 0 && span.duration_s() > 0) {
      // a/b/c copies only: a span without items carries key points or witness scalars
      evidence.h2d_points[pinned].first.push_back(mean_synthesizing(synth_spans, span.start_s, span.end_s));
      evidence.h2d_points[pinned].second.push_back(span.duration_s() / (double(span.bytes) / 1e9) - 1 / link_gbps);
    } else if (span.phase == trace::Phase::assemble || span.phase == trace::Phase::verify ||
               span.phase == trace::Phase::witness_split) {
      evidence.host_work.push_back({span.phase, mean_synthesizing(synth_spans, span.start_s, span.end_s), span.duration_s()});
    }
  }
}

// " (N spans ... left out)" where the phase had spans over a streamed key without their copies,
// or spans that waited for another worker's pageable copy.
std::string left_out_note(const TraceEvidence& evidence, trace::Phase phase) {
  std::string note;
  if (const auto untraced = evidence.untraced_streams.find(phase); untraced != evidence.untraced_streams.end())
    note += fmt::format(" ({} spans over a streamed key without its chunks' copies left out)", untraced->second);
  if (const auto waits = evidence.copy_waits.find(phase); waits != evidence.copy_waits.end())
    note += fmt::format(" ({} span(s) that waited for another worker's pageable copy left out: {:.3g} s beyond the "
                        "phase's median, not simulated)",
                        waits->second.spans, waits->second.beyond_s);
  return note;
}

void fit_gpu_phases(TraceEvidence& evidence, CalibrationFit& fit) {
  for (auto& [phase, points] : evidence.phase_points)
    fit_phase_cost(phase, left_out_note(evidence, phase), std::move(points.first), std::move(points.second), fit);
}

// The one per-chunk cost at which kernels over a streamed key, run through the model's timeline
// on their measured copies with `cost` for their work on the device, last in sum what they did.
FitReport fit_stream_chunk_s(trace::Phase phase, const std::vector<StreamedKernel>& kernels, PhaseCost& cost) {
  auto modelled_s = [&](const StreamedKernel& kernel, double chunk_s) {
    return modelled_duration_s(kernel, cost.seconds(kernel.items), chunk_s);
  };
  double measured_s = 0;
  for (const StreamedKernel& kernel : kernels) measured_s += kernel.duration_s;
  const double chunk_s = std::max(0.0, solve_increasing(  // a chunk never saves time
      [&](double chunk_s) {
        double sum = 0;
        for (const StreamedKernel& kernel : kernels) sum += modelled_s(kernel, chunk_s);
        return sum;
      },
      measured_s, -measured_s, measured_s));
  FitReport report{fmt::format("gpu_phase_cost.{}.stream_chunk_s (its spans over a streamed key, modelled, "
                               "last in sum what they did)", trace::phase_name(phase)),
                   "mitems", "seconds", {chunk_s}, {}, {}, {}, 0};
  for (const StreamedKernel& kernel : kernels) {
    report.x.push_back(double(kernel.items) / 1e6);
    report.y.push_back(kernel.duration_s);
  }
  add_residuals(report, [&](std::size_t i) { return modelled_s(kernels[i], chunk_s); });
  cost.stream_chunk_s = chunk_s;
  return report;
}

// Kernels over a streamed key. Where the phase was also measured with the key on the device, one
// per-chunk cost (a kernel bound by its copies gains less from it than one bound by its work: the
// G2 batch addition beside G1's three). Where not, each span's cost on the device, with its chunks
// at their default cost, fitted as the spans measured on the device are.
void fit_streamed_kernels(const TraceEvidence& evidence, CalibrationFit& fit) {
  for (const auto& [phase, kernels] : evidence.streamed) {
    if (const auto on_device = fit.gpu_phase_cost.find(phase); on_device != fit.gpu_phase_cost.end()) {
      fit.reports.push_back(fit_stream_chunk_s(phase, kernels, on_device->second));
      continue;
    }
    std::vector<double> mitems, seconds;
    const double chunk_s = default_stream_chunk_s(phase);
    for (const StreamedKernel& kernel : kernels) {
      mitems.push_back(double(kernel.items) / 1e6);
      seconds.push_back(solve_increasing([&](double kernel_s) { return modelled_duration_s(kernel, kernel_s, chunk_s); },
                                         kernel.duration_s, 0, kernel.duration_s));
    }
    fit_phase_cost(phase,
                   fmt::format(" (over a streamed key, its chunks at the default {} s each){}", chunk_s,
                               left_out_note(evidence, phase)),
                   std::move(mitems), std::move(seconds), fit);
  }
  for (const auto& [phase, spans] : evidence.untraced_streams)
    if (!fit.gpu_phase_cost.contains(phase))
      throw std::runtime_error(fmt::format(
          "gpu_phase_cost.{}: its {} spans run over a streamed key whose chunks' copies the traces do not show (traces "
          "before 2026-12-03), so they give no cost; calibrate on a run with the key on the device, or a newer one",
          trace::phase_name(phase), spans));
}

// The synthesis fit at parallel fraction p (one-core times: each span's time over its share
// factor), and its squared residuals back in measured seconds per million constraints.
std::pair<FitReport, double> fit_synthesis_at(const TraceEvidence& evidence, double p) {
  const auto& s_per_mconstraint = evidence.synth_s_per_mconstraint;
  const auto& inverse_cores = evidence.synth_inverse_cores;
  std::vector<double> one_core(s_per_mconstraint.size());
  for (std::size_t i = 0; i < one_core.size(); ++i)
    one_core[i] = s_per_mconstraint[i] / synthesis_share_factor(p, inverse_cores[i]);
  const std::string name = p > 0 ? fmt::format("synthesis, one core (parallel fraction {:.2f})", p) : "synthesis";
  FitReport report = fit_polynomial(name, "extra_threads", "core_s_per_mconstraint", evidence.synth_extra_threads, one_core, 1);
  // A negative slowdown is not physical (within a run the slow syntheses are those that ended
  // with fewer others still running, which biases the slope down): fit the mean instead.
  if (report.coefficients[1] < 0)
    report = fit_polynomial(name + " (negative slope refitted as a constant)", "extra_threads",
                            "core_s_per_mconstraint", evidence.synth_extra_threads, std::move(one_core), 0);
  double squared_seconds = 0;
  for (std::size_t i = 0; i < report.residuals.size(); ++i)
    squared_seconds += std::pow(report.residuals[i] * synthesis_share_factor(p, inverse_cores[i]), 2);
  return {std::move(report), squared_seconds};
}

// Syntheses on one whole number of cores that give it a measured correction of the share factor.
constexpr std::size_t kCoresFactorSpans = 8;

// The mean of `factors` (each synthesis's time relative to the share factor's fit) by the whole
// number of cores nearest each synthesis's, for the numbers at least kCoresFactorSpans ran on.
std::map<std::uint32_t, double> cores_factors(const std::vector<double>& factors,
                                              const std::vector<double>& inverse_cores) {
  std::map<std::uint32_t, std::pair<double, std::size_t>> sums;  // cores -> (sum, count)
  for (std::size_t i = 0; i < factors.size(); ++i) {
    auto& [sum, count] = sums[std::uint32_t(std::lround(1 / inverse_cores[i]))];
    sum += factors[i], ++count;
  }
  std::map<std::uint32_t, double> means;
  for (const auto& [cores, sum_count] : sums)
    if (sum_count.second >= kCoresFactorSpans) means[cores] = sum_count.first / double(sum_count.second);
  return means;
}

void fit_synthesis(const TraceEvidence& evidence, CalibrationFit& fit) {
  if (evidence.synth_s_per_mconstraint.empty()) return;
  // Syntheses that all had the same number of cores fit every p alike: p stays unfitted (the
  // scenario's, 0 by default). Otherwise the p of 0, 0.01 .. 0.99 that fits best.
  const auto [fewest_cores, most_cores] = std::ranges::minmax(evidence.synth_inverse_cores);
  auto [report, best_squared_seconds] = fit_synthesis_at(evidence, 0);
  if (most_cores - fewest_cores > 1e-9) {
    fit.synth_parallel_fraction = 0.0;
    for (int hundredths = 1; hundredths < 100; ++hundredths) {
      auto [candidate, squared_seconds] = fit_synthesis_at(evidence, hundredths / 100.0);
      if (squared_seconds < best_squared_seconds) {
        report = std::move(candidate), best_squared_seconds = squared_seconds;
        fit.synth_parallel_fraction = hundredths / 100.0;
      }
    }
  }
  fit.synth_core_s_per_mconstraint = report.coefficients[0];
  fit.synth_slowdown_per_extra_thread =
      report.coefficients.size() > 1 ? report.coefficients[1] / report.coefficients[0] : 0.0;
  std::vector<double> factors;  // how long each synthesis took relative to the fit
  for (std::size_t i = 0; i < report.y.size(); ++i) factors.push_back(report.y[i] / (report.y[i] - report.residuals[i]));
  if (fit.synth_parallel_fraction) {
    std::map<std::uint32_t, double> by_cores = cores_factors(factors, evidence.synth_inverse_cores);
    if (by_cores.size() > 1) {  // a shape across core counts (on one, the fit is its own)
      for (std::size_t i = 0; i < factors.size(); ++i)
        factors[i] /= synthesis_cores_factor(by_cores, 1 / evidence.synth_inverse_cores[i]);
      fit.synth_cores_factors = std::move(by_cores);
    }
  }
  // Scaled to mean 1: the model draws from these.
  const double mean = std::accumulate(factors.begin(), factors.end(), 0.0) / double(factors.size());
  for (double& factor : factors) factor /= mean;
  fit.synth_time_factors = std::move(factors);
  fit.reports.push_back(std::move(report));
}

// Each staging path's copy cost above the link by synthesizing threads. More memory load never
// speeds a copy up: where the fit (of runs that saw a narrow range of loads) decreases somewhere
// in 0..256 threads, a lower degree is fitted instead.
void fit_h2d_paths(const TraceEvidence& evidence, CalibrationFit& fit) {
  for (const auto& [pinned, points] : evidence.h2d_points) {
    const char* path = pinned ? "h2d.pinned" : "h2d.pageable";
    FitReport report;
    for (int degree = 2; degree >= 0; --degree) {
      report = fit_polynomial(degree == 2 ? path : fmt::format("{} (degree {}: a higher one decreased)", path, degree),
                              "synthesizing_threads", "s_per_gb_above_link", points.first, points.second, degree);
      report.coefficients.resize(3, 0.0);
      if (const double c1 = report.coefficients[1], c2 = report.coefficients[2]; c1 >= 0 && c1 + 2 * 256 * c2 >= 0) break;
    }
    (pinned ? fit.h2d_pinned : fit.h2d_pageable) = path_cost(report);
    fit.reports.push_back(std::move(report));
  }
  if (!evidence.h2d_points.empty()) fit.synth_memory_load_threads = 1.0;  // the H2D fits count synthesis threads
}

// Host work spans at one number of syntheses that give it a load factor.
constexpr std::size_t kLoadFactorSpans = 8;

// The median of each host work phase's spans.
std::map<trace::Phase, double> host_work_medians(const std::vector<HostWorkSpan>& spans) {
  std::map<trace::Phase, std::vector<double>> seconds;
  for (const HostWorkSpan& span : spans) seconds[span.phase].push_back(span.seconds);
  std::map<trace::Phase, double> medians;
  for (auto& [phase, values] : seconds) medians[phase] = trace::upper_median(std::move(values));
  return medians;
}

// Each host work span's time relative to its phase's median, by the number of syntheses running
// through it (rounded): the median at each number at least kLoadFactorSpans spans saw, a number
// between two of them at the one below, one below the first at the first; none where no number
// was seen that often.
std::optional<std::vector<double>> host_work_load_factors(const std::vector<HostWorkSpan>& spans,
                                                          const std::map<trace::Phase, double>& medians) {
  std::map<std::uint32_t, std::vector<double>> relative;  // syntheses -> times relative to the median
  for (const HostWorkSpan& span : spans)
    if (const double median = medians.at(span.phase); median > 0)
      relative[std::uint32_t(std::lround(span.synthesizing))].push_back(span.seconds / median);
  std::erase_if(relative, [](const auto& entry) { return entry.second.size() < kLoadFactorSpans; });
  if (relative.empty()) return std::nullopt;
  std::vector<double> factors;
  for (auto& [synthesizing, values] : relative) {
    const double factor = trace::upper_median(std::move(values));
    factors.resize(synthesizing, factors.empty() ? factor : factors.back());
    factors.push_back(factor);
  }
  return factors;
}

// The host's work: assembly and verification (medians), the compute section's host time and the
// witness split (medians, reported), their load factors, and whether assembly holds the compute
// section.
void fit_host_work(TraceEvidence& evidence, CalibrationFit& fit) {
  const std::map<trace::Phase, double> medians = host_work_medians(evidence.host_work);
  fit.host_work_load_factors = host_work_load_factors(evidence.host_work, medians);
  if (const auto assemble = medians.find(trace::Phase::assemble); assemble != medians.end()) fit.assemble_s = assemble->second;
  if (const auto verify = medians.find(trace::Phase::verify); verify != medians.end()) fit.verify_s = verify->second;
  auto reported_median = [&](std::optional<double>& value, const char* name, const char* y_name, std::vector<double>& y) {
    if (y.empty()) return;
    fit.reports.push_back(median_report(name, y_name, std::move(y)));
    value = fit.reports.back().coefficients[0];
  };
  reported_median(fit.compute_section_host_s, "cpu.compute_section_host_s", "idle_s_in_kernel_window",
                  evidence.section_idle_s);
  reported_median(fit.witness_split_s, "cpu.witness_split_s", "copy_end_to_first_kernel_s", evidence.split_s);
  if (evidence.assembly.assemblies > 0) fit.assemble_in_compute_section = evidence.assembly.overlapped == 0;
}

}  // namespace

CalibrationFit fit_traces(const std::vector<std::filesystem::path>& traces) {
  TraceEvidence evidence;
  for (const std::filesystem::path& path : traces) gather_evidence(path, evidence);
  CalibrationFit fit;
  fit_gpu_phases(evidence, fit);
  fit_streamed_kernels(evidence, fit);
  fit_synthesis(evidence, fit);
  fit_h2d_paths(evidence, fit);
  fit_host_work(evidence, fit);
  return fit;
}

void merge_fit(CalibrationFit& into, CalibrationFit from) {
  auto take = [](auto& target, auto& source) {
    if (source) target = source;
  };
  take(into.h2d_pinned, from.h2d_pinned);
  take(into.h2d_pageable, from.h2d_pageable);
  take(into.synth_time_factors, from.synth_time_factors);
  take(into.synth_cores_factors, from.synth_cores_factors);
  take(into.host_work_load_factors, from.host_work_load_factors);
  for_each_calibration_value([&](auto, auto, double, double, auto& target, auto& source) { take(target, source); }, into,
                             from);
  for (auto& [phase, cost] : from.gpu_phase_cost) into.gpu_phase_cost[phase] = cost;
  for (FitReport& report : from.reports) into.reports.push_back(std::move(report));
}

std::string calibration_toml(const CalibrationFit& fit, const std::string& provenance) {
  auto put = [](toml::table& table, const char* key, const auto& value) {
    if (value) table.insert(key, *value);
  };
  auto put_table = [](toml::table& into, const char* key, toml::table table) {
    if (!table.empty()) into.insert(key, std::move(table));
  };
  toml::table h2d, synthesis, cpu, phases, root;
  for (const auto& [name, cost] : {std::pair{"pinned", fit.h2d_pinned}, std::pair{"pageable", fit.h2d_pageable}})
    if (cost)
      h2d.insert(name, toml::table{{"overhead_s_per_gb", cost->overhead_s_per_gb},
                                   {"per_thread_s_per_gb", cost->per_thread_s_per_gb},
                                   {"per_thread_squared_s_per_gb", cost->per_thread_squared_s_per_gb}});
  for_each_calibration_value(
      [&](std::string_view table, const char* key, double, double, const auto& value) {
        put(table == "cpu" ? cpu : synthesis, key, value);
      },
      fit);
  auto put_numbers = [](toml::table& table, const char* key, const std::optional<std::vector<double>>& values) {
    if (!values) return;
    toml::array numbers;
    for (double value : *values) numbers.push_back(value);
    table.insert(key, std::move(numbers));
  };
  put_numbers(synthesis, "time_factors", fit.synth_time_factors);
  put_numbers(cpu, "host_work_load_factors", fit.host_work_load_factors);
  if (fit.synth_cores_factors && !fit.synth_cores_factors->empty()) {
    toml::array cores, factors;
    for (const auto& [k, factor] : *fit.synth_cores_factors) cores.push_back(std::int64_t(k)), factors.push_back(factor);
    synthesis.insert("factor_cores", std::move(cores));
    synthesis.insert("cores_factors", std::move(factors));
  }
  for (const auto& [phase, cost] : fit.gpu_phase_cost) {
    toml::table table{{"fixed_s", cost.fixed_s}, {"per_mitem_s", cost.per_mitem_s}};
    put(table, "stream_chunk_s", cost.stream_chunk_s);
    phases.insert(trace::phase_name(phase), std::move(table));
  }
  put_table(root, "h2d", std::move(h2d));
  put_table(root, "synthesis", std::move(synthesis));
  put_table(root, "cpu", std::move(cpu));
  put_table(root, "gpu_phase_cost", std::move(phases));
  // Six significant digits: the fits' own spread is wider by orders of magnitude.
  std::ostringstream text;
  text << toml_comment("zkpipe calibration: " + provenance) << "\n"
       << toml::toml_formatter(root, toml::toml_formatter::default_flags | toml::format_flags::relaxed_float_precision)
       << "\n";
  return text.str();
}

std::string toml_comment(std::string text) {
  std::ranges::replace_if(text, [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return "# " + text + "\n";
}

std::string format_fit_reports(const std::vector<FitReport>& reports) {
  std::string text;
  for (const FitReport& report : reports) {
    std::string coefficients;
    for (std::size_t j = 0; j < report.coefficients.size(); ++j)
      coefficients += fmt::format("{}c{} = {:.6g}", j ? ", " : "", j, report.coefficients[j]);
    text += fmt::format("fit {}: {} = poly({}): {}  (rms residual {:.3g}, {} points)\n", report.name, report.y_name,
                        report.x_name, coefficients, report.rms_residual, report.x.size());
    const std::size_t shown = std::min<std::size_t>(report.x.size(), 12);
    for (std::size_t i = 0; i < shown; ++i)
      text += fmt::format("    {} = {:<10.4g} {} = {:<12.6g} residual {:+.3g}\n", report.x_name, report.x[i],
                          report.y_name, report.y[i], report.residuals[i]);
    if (shown < report.x.size()) text += fmt::format("    ... {} more points\n", report.x.size() - shown);
  }
  return text;
}

std::string h2d_prediction_table(const CalibrationFit& fit, double link_gbps, int max_threads,
                                 const std::vector<H2dBenchmarkRow>& measured) {
  if (!fit.h2d_pinned || !fit.h2d_pageable)
    throw std::runtime_error("the H2D table needs both a pinned and a pageable fit");
  auto measured_at = [&](bool pinned, int threads) {
    std::string cells;
    for (const H2dBenchmarkRow& row : measured)
      if (row.thrash_threads == threads && (row.mode != "pageable") == pinned)
        cells += fmt::format("{}{:.2f} ({})", cells.empty() ? "" : ", ", row.h2d_gbps, row.mode);
    return cells;
  };
  std::string table = fmt::format(
      "| loading threads | predicted pinned GB/s | predicted pageable GB/s | measured pinned | measured pageable |\n"
      "|---:|---:|---:|---:|---:|\n");
  for (int threads = 0; threads <= max_threads; ++threads)
    table += fmt::format("| {} | {:.2f} | {:.2f} | {} | {} |\n", threads, fit.h2d_pinned->rate_gbps(link_gbps, threads),
                         fit.h2d_pageable->rate_gbps(link_gbps, threads), measured_at(true, threads),
                         measured_at(false, threads));
  return table;
}

}  // namespace zkpipe::model
