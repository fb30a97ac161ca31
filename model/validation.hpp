// Contract: the model's validation loop against measured traces (issue 5): the measured runs of a
// folder (every trace.csv below it with its trace.json sidecar, as tools/h200-staging-experiment.sh
// writes OUT/<circuit>/<run>/) are split into a calibration set and a held-out set; each held-out
// run is predicted by calibrating on the calibration runs of its workload (the sidecar's circuit
// and constraints; all calibration runs where its workload has none), building the scenario from
// its own sidecar (machine facts, settings, z's length and public inputs) and trace (the workload's
// scalar shares), and simulating it; measured and simulated traces are summarized by the one
// trace::summarize.
//
// Runs are named by their folder relative to the traces folder ("dense/pinned"). A run named
// <point>-r<k> repeats the measurement of <point> (sweep-t4-s2-r2: the second repeat of
// sweep-t4-s2, which may itself be a run too): the repeats of a point are split together and its
// measured figures are their medians. Stage-alone runs (settings.stage_alone other than "none":
// capacity measurements the model does not simulate) and measured traces without GPU kernels are
// left out. The default split is deterministic: per workload, points in name order go
// alternately to calibration (first) and held out, so the experiment's sweep sweep-t<T>-s<S>
// calibrates on slabs {1, 4} and predicts slabs {2, 8}. `calibrate_on` (shell globs, fnmatch,
// against run names) replaces it: matched runs calibrate, the others are held out. `only`
// (globs, empty: every run) restricts both sets to the runs it matches, e.g. to one experiment's
// sweep.
//
// A calibration fits how synthesis times vary from partition to partition (synthesis.time_factors);
// a simulation draws each partition's factor from its seed, so each held-out point is simulated
// with `seeds` seeds (1, 2, ...) and its simulated figures are their medians.
//
// validate() writes into `output`: calibration-<workload>.toml per calibration used, per held-out
// point <point>/scenario.toml and <point>/simulated.csv (seed 1, with its sidecar), and
// validation.md (the table). Errors (no runs, a sidecar lacking a setting, a failed simulation)
// throw; predictions missing the targets do not.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "trace/sidecar.hpp"
#include "trace/summary.hpp"

namespace zkpipe::model {

struct MeasuredRun {
  std::string name;             // folder relative to the traces folder
  std::filesystem::path trace;  // its trace.csv
  trace::Sidecar sidecar;
  std::string workload;         // "<circuit>-<constraints>": which runs calibrate which
  bool stage_alone = false;
};

// Every trace.csv below `folder` with its sidecar, in name order.
std::vector<MeasuredRun> find_measured_runs(const std::filesystem::path& folder);

// The point a run measured: its name without a repeat suffix -r<k> ("pm/sweep-t4-s2-r3" ->
// "pm/sweep-t4-s2"; other names are their own point).
std::string measured_point(const std::string& run_name);

struct ValidationSplit {
  std::vector<MeasuredRun> calibration, held_out;
};

ValidationSplit split_runs(const std::vector<MeasuredRun>& runs, const std::vector<std::string>& calibrate_on,
                           const std::vector<std::string>& only = {});

// The scenario TOML that predicts `run`: its machine facts, settings and workload shape, with
// `calibration_files` (absolute paths, read in order) for the costs.
std::string scenario_toml_for_run(const MeasuredRun& run, const std::vector<std::filesystem::path>& calibration_files);

struct ValidationOptions {
  std::filesystem::path traces;                        // the folder of measured runs
  std::filesystem::path output;                        // where everything is written
  std::vector<std::string> calibrate_on;               // globs; empty: the default split
  std::vector<std::string> only;                       // globs; empty: every run
  std::vector<std::filesystem::path> base_calibration;  // read before the fit (e.g. the H2D benchmark's fit)
  std::size_t parallel = 1;                            // simulations at once
  std::size_t seeds = 101;                             // simulations per held-out point
};

struct ValidatedRun {
  std::string name;                  // the point
  std::vector<std::string> repeats;  // its measured runs (one unless it was measured again)
  std::string calibrated_on;         // the workload whose calibration runs predicted it, or "all"
  std::vector<trace::TraceSummary> measured_repeats;
  double measured_partitions_per_s = 0;  // medians over the repeats
  double measured_gpu_utilization = 0;
  std::vector<trace::TraceSummary> simulated_seeds;
  double simulated_partitions_per_s = 0;  // medians over the seeds
  double simulated_gpu_utilization = 0;
  double throughput_error_pct = 0;  // simulated vs measured partitions/s, relative
  double utilization_points = 0;    // simulated - measured GPU utilization, in points
};

struct ValidationResult {
  std::vector<std::string> calibration_runs;
  std::vector<ValidatedRun> runs;
  std::string fit_reports;  // each calibration's fits and residuals
  double mean_abs_throughput_error_pct = 0;
  double max_abs_utilization_points = 0;
};

ValidationResult validate(const ValidationOptions& options);

// Markdown: one row per held-out point, then the mean throughput error and the largest utilization
// difference against the targets (<= 5 % mean, within 5 points).
std::string format_validation(const ValidationResult& result);

}  // namespace zkpipe::model
