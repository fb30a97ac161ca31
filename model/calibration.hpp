// Contract: fits the model's parameters by linear least squares (Eigen) and prints each fit's
// residuals, from two kinds of evidence:
//  - an H2D bandwidth benchmark CSV (mode,thrash_threads,h2d_GBps,thrash_GBps; like
//    scenarios/calibration/h200-h2d.csv): per path, seconds per GB against memory-loading threads;
//  - traces in the shared schema (measured or simulated), each with its JSON sidecar stating the
//    staging and the PCIe link rate: per GPU phase, seconds against items; synthesis seconds per
//    million constraints against concurrent synthesis threads; H2D seconds per GB per path
//    against concurrent synthesis threads.
// A polynomial fit uses as many terms as the data has distinct x values allow (up to its
// degree), so one thread count or one size still gives a usable, if flatter, fit.
// The result is written as a calibration TOML that a scenario includes.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scenario.hpp"

namespace zkpipe::model {

struct FitReport {
  std::string name;        // "h2d.pinned", "gpu_phase_cost.ntt" ...
  std::string x_name, y_name;
  std::vector<double> coefficients;  // constant first
  std::vector<double> x, y, residuals;
  double rms_residual = 0;
};

struct CalibrationFit {
  std::optional<H2dPathCost> h2d_pinned, h2d_pageable;
  std::optional<double> synth_core_s_per_mconstraint;
  std::optional<double> synth_slowdown_per_extra_thread;
  std::optional<std::vector<double>> synth_time_factors;
  std::optional<double> synth_parallel_fraction;  // only where the runs' core shares differ
  std::optional<std::map<std::uint32_t, double>> synth_cores_factors;  // where they ran on several
  std::optional<double> synth_memory_load_threads;
  std::optional<double> assemble_s;
  std::optional<bool> assemble_in_compute_section;
  std::optional<double> compute_section_host_s;
  std::optional<double> witness_split_s;
  std::optional<double> verify_s;
  std::optional<std::vector<double>> host_work_load_factors;  // where host work ran at several loads
  std::map<trace::Phase, PhaseCost> gpu_phase_cost;
  std::vector<FitReport> reports;
};

struct H2dBenchmarkRow {
  std::string mode;  // pinned, registered (pinned path), pageable
  double thrash_threads = 0;
  double h2d_gbps = 0;
};

std::vector<H2dBenchmarkRow> read_h2d_benchmark(const std::filesystem::path& csv);
// Fits both paths; link_gbps is the PCIe rate the fit subtracts (the idle pinned rate by default).
CalibrationFit fit_h2d_benchmark(const std::vector<H2dBenchmarkRow>& rows, std::optional<double> link_gbps);
double idle_pinned_gbps(const std::vector<H2dBenchmarkRow>& rows);

// Fits from traces; each trace file needs its sidecar (trace.json) with settings.staging and
// machine.pcie_h2d_gbps. Measured and simulated traces count GPU items alike (gpu_kernels.hpp):
// each GPU phase's cost is fitted from its spans as they are, where the key was on the device. A
// kernel span with the chunks of a streamed key copied inside it (itemless h2d spans of its
// partition) gives its phase's stream_chunk_s instead: the per-chunk cost at which the model's
// timeline of those spans (streamed_kernel_s on their measured copies) lasts, in sum, what they
// did; or, where the phase has no span on the device, its cost with its chunks at the default
// (default_stream_chunk_s). Kernel spans of a streamed run without their chunks' spans (older
// traces) are left out, and a phase left with none throws; so are, in pageable runs, kernel spans
// that waited for another worker's copy to their GPU (started during it and longer than their
// phase's median in the run by 5 ms, by half that median and by a third of what was left of the
// copy), which the reports count. Besides the fits: assemble_s and
// verify_s are the medians of those spans; compute_section_host_s the median idle time inside a
// GPU attempt's kernel window; witness_split_s the median time from a copy's end to its first
// kernel where the GPU was free (trace_attempts.hpp); host_work_load_factors, where the assembly,
// verification and witness split spans (schema 2) ran beside a number of syntheses (the mean
// over a span, rounded) that at least 8 spans saw: for each such number n, the
// median of those spans' times relative to their phase's median (a number between two of them
// at the one below, a number below the first at the first); synth_time_factors every synthesis's
// time relative to the synthesis fit, scaled to mean 1, in the order they started (the model
// draws from them);
// synth_parallel_fraction the p (0, 0.01 .. 0.99) whose synthesis fit leaves the smallest
// residuals in seconds, where runs gave their synthesis threads different core shares (a run at one
// share cannot tell p apart), and then, where syntheses ran on two or more whole numbers of cores,
// synth_cores_factors: for each number at least 8 syntheses ran on (1 / a synthesis's mean inverse
// cores, rounded), their mean time relative to that fit (the time factors are then relative to the
// fit so corrected);
// assemble_in_compute_section is true when assemblies were seen and no other
// partition's kernel on the same GPU ever started during one (the section was held).
CalibrationFit fit_traces(const std::vector<std::filesystem::path>& traces);

// Merges `from` into `into` (values in `from` win) and appends its reports.
void merge_fit(CalibrationFit& into, CalibrationFit from);

// The calibration as TOML, after a comment line "# zkpipe calibration: <provenance>".
std::string calibration_toml(const CalibrationFit& fit, const std::string& provenance);
// A TOML comment line of `text` (paths included), its line breaks as spaces: a line break in a
// trace's path must not end the comment.
std::string toml_comment(std::string text);
std::string format_fit_reports(const std::vector<FitReport>& reports);

// Markdown table of predicted H2D GB/s per path for 0..max_threads memory-loading threads.
std::string h2d_prediction_table(const CalibrationFit& fit, double link_gbps, int max_threads,
                                 const std::vector<H2dBenchmarkRow>& measured);

}  // namespace zkpipe::model
