#include "calibration.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <Eigen/Dense>
#include <fmt/format.h>
#include <libfccp/csv.h>

#include "trace/sidecar.hpp"
#include "trace/trace_csv.hpp"

namespace zkpipe::model {

namespace {

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
  const Eigen::VectorXd residuals = observed - design * solution;
  FitReport report{std::move(name), std::move(x_name), std::move(y_name), {}, std::move(x), std::move(y), {}, 0};
  report.coefficients.assign(std::size_t(max_degree) + 1, 0.0);
  for (int j = 0; j <= degree; ++j) report.coefficients[std::size_t(j)] = solution(j);
  report.residuals.assign(residuals.begin(), residuals.end());
  report.rms_residual = std::sqrt(residuals.squaredNorm() / double(residuals.size()));
  return report;
}

H2dPathCost path_cost(const FitReport& report) {
  return {report.coefficients[0], report.coefficients[1], report.coefficients[2]};
}

// Time-weighted number of synthesis spans of `run` active during [start_s, end_s].
double mean_synthesizing(const std::vector<const trace::Span*>& synth_spans, double start_s, double end_s) {
  if (end_s <= start_s) {
    double active = 0;
    for (const trace::Span* span : synth_spans) active += span->start_s <= start_s && start_s < span->end_s;
    return active;
  }
  double overlap_s = 0;
  for (const trace::Span* span : synth_spans)
    overlap_s += std::max(0.0, std::min(end_s, span->end_s) - std::max(start_s, span->start_s));
  return overlap_s / (end_s - start_s);
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

CalibrationFit fit_traces(const std::vector<std::filesystem::path>& traces) {
  std::map<trace::Phase, std::pair<std::vector<double>, std::vector<double>>> phase_points;
  std::vector<double> synth_extra_threads, synth_s_per_mconstraint, assemble_s;
  std::map<bool, std::pair<std::vector<double>, std::vector<double>>> h2d_points;  // pinned? -> (t, s/GB)
  for (const std::filesystem::path& path : traces) {
    const trace::Trace spans = trace::read_csv_file(path);
    const std::filesystem::path sidecar_path = trace::sidecar_path_for(path);
    if (!std::filesystem::exists(sidecar_path))
      throw std::runtime_error(fmt::format("{}: no sidecar {} stating staging and PCIe rate; write it next to the trace",
                                           path.string(), sidecar_path.string()));
    const trace::Sidecar sidecar = trace::read_sidecar(sidecar_path);
    const auto staging = policy::parse_staging(sidecar.settings.value("staging", std::string()));
    const double link_gbps = sidecar.machine.value("pcie_h2d_gbps", 0.0);
    if (!staging || link_gbps <= 0)
      throw std::runtime_error(fmt::format("{}: needs settings.staging (pinned|pageable) and machine.pcie_h2d_gbps",
                                           sidecar_path.string()));
    std::map<std::string, std::vector<const trace::Span*>> synth_by_run;
    for (const trace::Span& span : spans)
      if (span.phase == trace::Phase::synth) synth_by_run[span.run].push_back(&span);
    for (const trace::Span& span : spans) {
      const auto& synth_spans = synth_by_run[span.run];
      if (trace::is_gpu_compute(span.phase)) {
        phase_points[span.phase].first.push_back(double(span.items) / 1e6);
        phase_points[span.phase].second.push_back(span.duration_s());
      } else if (span.phase == trace::Phase::synth && span.items > 0) {
        synth_extra_threads.push_back(mean_synthesizing(synth_spans, span.start_s, span.end_s) - 1);
        synth_s_per_mconstraint.push_back(span.duration_s() / (double(span.items) / 1e6));
      } else if (span.phase == trace::Phase::h2d && span.bytes > 0 && span.duration_s() > 0) {
        // a span without items carries SRS bases, which always come from pinned memory
        const bool pinned = *staging == policy::Staging::pinned || span.items == 0;
        h2d_points[pinned].first.push_back(mean_synthesizing(synth_spans, span.start_s, span.end_s));
        h2d_points[pinned].second.push_back(span.duration_s() / (double(span.bytes) / 1e9) - 1 / link_gbps);
      } else if (span.phase == trace::Phase::assemble) {
        assemble_s.push_back(span.duration_s());
      }
    }
  }
  CalibrationFit fit;
  for (auto& [phase, points] : phase_points) {
    FitReport report = fit_polynomial(fmt::format("gpu_phase_cost.{}", trace::phase_name(phase)), "mitems", "seconds",
                                      std::move(points.first), std::move(points.second), 1);
    fit.gpu_phase_cost[phase] = {report.coefficients[0], report.coefficients[1]};
    fit.reports.push_back(std::move(report));
  }
  if (!synth_s_per_mconstraint.empty()) {
    FitReport report = fit_polynomial("synthesis", "extra_threads", "core_s_per_mconstraint",
                                      std::move(synth_extra_threads), std::move(synth_s_per_mconstraint), 1);
    fit.synth_core_s_per_mconstraint = report.coefficients[0];
    fit.synth_slowdown_per_extra_thread = report.coefficients[1] / report.coefficients[0];
    fit.reports.push_back(std::move(report));
  }
  for (auto& [pinned, points] : h2d_points) {
    FitReport report = fit_polynomial(pinned ? "h2d.pinned" : "h2d.pageable", "synthesizing_threads",
                                      "s_per_gb_above_link", std::move(points.first), std::move(points.second), 2);
    (pinned ? fit.h2d_pinned : fit.h2d_pageable) = path_cost(report);
    fit.reports.push_back(std::move(report));
  }
  if (!h2d_points.empty()) fit.synth_memory_load_threads = 1.0;  // the H2D fits count synthesis threads
  if (!assemble_s.empty()) {
    std::ranges::nth_element(assemble_s, assemble_s.begin() + std::ptrdiff_t(assemble_s.size() / 2));
    fit.assemble_s = assemble_s[assemble_s.size() / 2];
  }
  return fit;
}

void merge_fit(CalibrationFit& into, CalibrationFit from) {
  auto take = [](auto& target, auto& source) {
    if (source) target = source;
  };
  take(into.h2d_pinned, from.h2d_pinned);
  take(into.h2d_pageable, from.h2d_pageable);
  take(into.synth_core_s_per_mconstraint, from.synth_core_s_per_mconstraint);
  take(into.synth_slowdown_per_extra_thread, from.synth_slowdown_per_extra_thread);
  take(into.synth_memory_load_threads, from.synth_memory_load_threads);
  take(into.assemble_s, from.assemble_s);
  for (auto& [phase, cost] : from.gpu_phase_cost) into.gpu_phase_cost[phase] = cost;
  for (FitReport& report : from.reports) into.reports.push_back(std::move(report));
}

std::string calibration_toml(const CalibrationFit& fit, const std::string& provenance) {
  std::string text = fmt::format("# zkpipe calibration: {}\n", provenance);
  for (const auto& [name, cost] : {std::pair{"pinned", fit.h2d_pinned}, std::pair{"pageable", fit.h2d_pageable}})
    if (cost)
      text += fmt::format("\n[h2d.{}]\noverhead_s_per_gb = {:.9g}\nper_thread_s_per_gb = {:.9g}\n"
                          "per_thread_squared_s_per_gb = {:.9g}\n",
                          name, cost->overhead_s_per_gb, cost->per_thread_s_per_gb, cost->per_thread_squared_s_per_gb);
  if (fit.synth_core_s_per_mconstraint || fit.synth_memory_load_threads) {
    text += "\n[synthesis]\n";
    if (fit.synth_core_s_per_mconstraint)
      text += fmt::format("core_s_per_mconstraint = {:.9g}\nslowdown_per_extra_thread = {:.9g}\n",
                          *fit.synth_core_s_per_mconstraint, *fit.synth_slowdown_per_extra_thread);
    if (fit.synth_memory_load_threads)
      text += fmt::format("memory_load_threads = {:.9g}\n", *fit.synth_memory_load_threads);
  }
  if (fit.assemble_s) text += fmt::format("\n[cpu]\nassemble_s = {:.9g}\n", *fit.assemble_s);
  for (const auto& [phase, cost] : fit.gpu_phase_cost)
    text += fmt::format("\n[gpu_phase_cost.{}]\nfixed_s = {:.9g}\nper_mitem_s = {:.9g}\n", trace::phase_name(phase),
                        cost.fixed_s, cost.per_mitem_s);
  return text;
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
    return cells.empty() ? std::string("") : cells;
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
