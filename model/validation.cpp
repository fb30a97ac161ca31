#include "validation.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibration.hpp"
#include "engine/util/atomic_file.hpp"
#include "child_process.hpp"
#include "scenario.hpp"
#include "sidecar_facts.hpp"
#include "simulation.hpp"
#include "trace/trace_csv.hpp"
#include "trace_attempts.hpp"

namespace zkpipe::model {

namespace fs = std::filesystem;

namespace {

// A run name as a scenario name and a file name: letters, digits and . _ - + only.
std::string safe_name(const std::string& name) {
  std::string safe = name;
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-' && c != '+') c = '.';
  return safe;
}

// Throws, naming the sidecar and the key (machine.cores), where the run's sidecar lacks a fact
// that the model needs to predict it.
void require(bool present, std::string_view key, const MeasuredRun& run) {
  if (!present)
    throw std::runtime_error(fmt::format("{}: the sidecar has no {}: the model needs it to predict the run",
                                         trace::sidecar_path_for(run.trace).string(), key));
}

template <typename T>
T required(const std::optional<T>& fact, std::string_view key, const MeasuredRun& run) {
  require(fact.has_value(), key, run);
  return *fact;
}

// The medians of `summaries`' partitions/s and GPU utilization.
std::pair<double, double> median_rate_and_utilization(const std::vector<trace::TraceSummary>& summaries) {
  std::vector<double> rates, utilizations;
  for (const trace::TraceSummary& summary : summaries)
    rates.push_back(summary.partitions_per_s), utilizations.push_back(summary.gpu_utilization);
  return {trace::median(std::move(rates)), trace::median(std::move(utilizations))};
}

}  // namespace

std::vector<MeasuredRun> find_measured_runs(const fs::path& folder) {
  if (!fs::is_directory(folder)) throw std::runtime_error(fmt::format("{}: not a folder of measured runs", folder.string()));
  std::vector<MeasuredRun> runs;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file() || entry.path().filename() != "trace.csv") continue;
    const fs::path sidecar = trace::sidecar_path_for(entry.path());
    if (!fs::exists(sidecar)) continue;
    MeasuredRun run;
    run.name = fs::relative(entry.path().parent_path(), folder).generic_string();
    run.trace = entry.path();
    run.sidecar = trace::read_sidecar(sidecar);
    if (run.sidecar.source != trace::Source::measured) continue;
    run.stage_alone = run.sidecar.settings.stage_alone != trace::StageAlone::none;
    const trace::JobFacts& job = run.sidecar.scenario;
    run.workload = fmt::format("{}-{}", job.job, job.constraints_per_partition.value_or(0));
    runs.push_back(std::move(run));
  }
  std::ranges::sort(runs, {}, &MeasuredRun::name);
  return runs;
}

std::string measured_point(const std::string& run_name) {
  const std::size_t suffix = run_name.rfind("-r");
  if (suffix == std::string::npos || suffix + 2 == run_name.size() || run_name.find('/', suffix) != std::string::npos ||
      !std::all_of(run_name.begin() + std::ptrdiff_t(suffix) + 2, run_name.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return run_name;
  return run_name.substr(0, suffix);
}

ValidationSplit split_runs(const std::vector<MeasuredRun>& runs, const std::vector<std::string>& calibrate_on,
                           const std::vector<std::string>& only) {
  auto matches = [](const std::vector<std::string>& globs, const MeasuredRun& run) {
    return std::ranges::any_of(globs, [&](const std::string& glob) { return ::fnmatch(glob.c_str(), run.name.c_str(), 0) == 0; });
  };
  ValidationSplit split;
  std::map<std::string, std::size_t> points_of_workload;
  std::map<std::string, bool> point_calibrates;  // the default split decides per point, in name order
  for (const MeasuredRun& run : runs) {
    if (run.stage_alone || (!only.empty() && !matches(only, run))) continue;
    const auto [point, first_seen] = point_calibrates.try_emplace(measured_point(run.name), false);
    if (first_seen) point->second = points_of_workload[run.workload]++ % 2 == 0;
    const bool calibrates = calibrate_on.empty() ? point->second : matches(calibrate_on, run);
    (calibrates ? split.calibration : split.held_out).push_back(run);
  }
  return split;
}

namespace {


// The scenario's [workload]: the run's partitions and the shape its trace measured, with what the
// backend held on a device (runs traced since the device-memory plan) and what the host budget
// held beside the a/b/c (runs that state their workers' bytes).
toml::table workload_table(const MeasuredRun& run, const WorkloadShape& shape) {
  const trace::JobFacts& job = run.sidecar.scenario;
  const double abc_bytes = double(required(job.partition_abc_bytes, "scenario.partition_abc_bytes", run));
  toml::table workload{
      {"partitions", std::int64_t(job.partitions)},
      {"constraints_per_partition", std::int64_t(shape.constraints)},
      {"bytes_per_constraint", std::max(1.0, abc_bytes / double(shape.constraints))},
      {"zero_scalar_share", shape.zero_scalar_share},
      {"one_scalar_share", shape.one_scalar_share},
      {"b_absent_one_share", shape.b_absent_one_share},
      {"b_absent_significant_share", shape.b_absent_significant_share},
      {"variables", std::int64_t(shape.variables)},
      {"public_inputs", std::int64_t(job.public_inputs.value_or(0))},
      {"public_inputs_one", std::int64_t(shape.public_inputs_one)},
      {"public_inputs_zero", std::int64_t(shape.public_inputs_zero)},
      {"witness_upload_mib", double(shape.witness_upload_bytes) / bytes_per_mib}};
  if (const auto& footprint = run.sidecar.settings.device_footprint) {
    workload.insert("device_key_mib", double(footprint->key_bytes) / bytes_per_mib);
    workload.insert("device_shared_mib", double(footprint->shared_bytes) / bytes_per_mib);
    workload.insert("device_worker_mib", double(footprint->worker_bytes) / bytes_per_mib);
    workload.insert("device_streaming_mib", double(footprint->streaming_bytes) / bytes_per_mib);
  }
  if (job.worker_host_bytes) {
    workload.insert("host_witness_mib", double(job.partition_witness_bytes.value_or(0)) / bytes_per_mib);
    workload.insert("host_key_mib", double(job.proving_key_bytes.value_or(0)) / bytes_per_mib);
    workload.insert("host_worker_mib", double(*job.worker_host_bytes) / bytes_per_mib);
  }
  return workload;
}

// The scenario's [policy]: the run's effective settings. Runs traced before a setting existed
// read as its default (one pool per host, the key on the device); the settings that every run
// resolves must be stated.
toml::table policy_table(const MeasuredRun& run) {
  const policy::JobSettings& policy = run.sidecar.settings.job;
  require(policy.staging.has_value(), "settings.staging", run);
  require(policy.synthesis_threads > 0, "settings.synthesis_threads", run);
  require(policy.partitions_in_flight > 0, "settings.partitions_in_flight", run);
  require(policy.host_budget_bytes > 0, "settings.host_budget_bytes", run);
  toml::table knobs{
      {"synthesis_threads", std::int64_t(policy.synthesis_threads)},
      {"synthesis_core_share", std::string(zk::name_of(synthesis_core_share_names, run.sidecar.settings.synthesis_core_share))},
      {"partitions_in_flight", std::int64_t(policy.partitions_in_flight)},
      {"staging", std::string(policy::staging_name(*policy.staging))},
      {"pool_layout", std::string(policy::pool_layout_name(policy.pool_layout))},
      {"host_budget_gib", double(policy.host_budget_bytes) / bytes_per_gib},
      {"workers_per_gpu", std::int64_t(policy.workers_per_gpu)},
      {"srs_residency", std::string(policy::srs_residency_name(policy.srs_residency))},
      {"retry_limit", std::int64_t(policy.retry_limit)},
      {"device_budget_gib", double(policy.device_budget_bytes) / bytes_per_gib}};
  if (*policy.staging == policy::Staging::pinned) knobs.insert("pool_slabs", std::int64_t(policy.pool_slabs));
  return knobs;
}

}  // namespace

std::string scenario_toml_for_run(const MeasuredRun& run, const std::vector<fs::path>& calibration_files) {
  const trace::MachineFacts& machine = run.sidecar.machine;
  const trace::JobFacts& job = run.sidecar.scenario;
  const auto shape = measured_shape(trace::read_csv_file(run.trace), job.variables.value_or(0),
                                    std::uint32_t(job.public_inputs.value_or(0)));
  if (!shape)
    throw std::runtime_error(fmt::format("{}: no GPU attempt with msm_a and a partition size: nothing to predict",
                                         run.trace.string()));
  const toml::table knobs = policy_table(run);
  const toml::table workload = workload_table(run, *shape);
  toml::array includes;
  for (const fs::path& file : calibration_files) includes.push_back(file.string());
  const trace::RunSettings& settings = run.sidecar.settings;
  toml::table hardware{{"cores", std::int64_t(required(machine.cores, "machine.cores", run))},
                       {"pcie_h2d_gbps", required(machine.pcie_h2d_gbps, "machine.pcie_h2d_gbps", run)},
                       {"gpus", std::int64_t(settings.gpus)}};
  // A pinned pipeline whose copies read pageable memory ran on a host that pins none.
  if (settings.job.staging == policy::Staging::pinned && settings.copies_staging == policy::Staging::pageable)
    hardware.insert("pins_host_memory", false);
  const toml::table scenario{{"name", safe_name(run.name)}, {"seed", 1},           {"calibration", includes},
                             {"hardware", hardware},        {"workload", workload}, {"policy", knobs}};
  std::ostringstream text;
  text << toml_comment(fmt::format("{}: the measured run {}, predicted (written by zkpipe validate)", safe_name(run.name),
                                   run.trace.string()))
       << toml::toml_formatter(scenario) << "\n";
  return text.str();
}

namespace {

// One calibration per workload that has calibration runs, and one of all runs ("all") for the
// others, each fitted at its first use and written to the output folder.
class WorkloadCalibrations {
 public:
  WorkloadCalibrations(const std::vector<MeasuredRun>& runs, const fs::path& output, std::string& fit_reports)
      : runs_(runs), output_(output), fit_reports_(fit_reports) {}

  const fs::path& file_for(const std::string& workload) {
    if (const auto found = files_.find(workload); found != files_.end()) return found->second;
    std::vector<fs::path> traces;
    for (const MeasuredRun& run : runs_)
      if (workload == "all" || run.workload == workload) traces.push_back(run.trace);
    const CalibrationFit fit = fit_traces(traces);
    const fs::path file = fs::absolute(output_ / fmt::format("calibration-{}.toml", safe_name(workload)));
    zk::write_text_atomically(file, calibration_toml(fit, fmt::format("fitted by zkpipe validate from {} measured run(s) of {}",
                                                       traces.size(), workload)));
    fit_reports_ += fmt::format("calibration {} ({} runs):\n{}", workload, traces.size(), format_fit_reports(fit.reports));
    return files_.emplace(workload, file).first->second;
  }

 private:
  const std::vector<MeasuredRun>& runs_;
  const fs::path& output_;
  std::string& fit_reports_;
  std::map<std::string, fs::path> files_;
};

// The held-out points, each its runs (a run and its repeats), in the order of their first run.
std::vector<std::vector<const MeasuredRun*>> held_out_points(const std::vector<MeasuredRun>& held_out) {
  std::vector<std::vector<const MeasuredRun*>> points;
  std::map<std::string, std::size_t> point_index;
  for (const MeasuredRun& run : held_out) {
    const auto [found, added] = point_index.try_emplace(measured_point(run.name), points.size());
    if (added) points.emplace_back();
    points[found->second].push_back(&run);
  }
  return points;
}

// A held-out point's measured figures, and the scenario that predicts it (written to its folder).
std::pair<ValidatedRun, Scenario> prepare_point(const std::vector<const MeasuredRun*>& repeats,
                                                const ValidationSplit& split, const std::vector<fs::path>& base,
                                                WorkloadCalibrations& calibrations, const fs::path& output) {
  const MeasuredRun& run = *repeats.front();
  const bool own = std::ranges::any_of(split.calibration, [&](const MeasuredRun& c) { return c.workload == run.workload; });
  ValidatedRun validated;
  validated.name = measured_point(run.name);
  validated.calibrated_on = own ? run.workload : "all";
  std::vector<fs::path> files = base;
  files.push_back(calibrations.file_for(validated.calibrated_on));
  const fs::path folder = output / validated.name;
  fs::create_directories(folder);
  const std::string text = scenario_toml_for_run(run, files);
  zk::write_text_atomically(folder / "scenario.toml", text);
  for (const MeasuredRun* repeat : repeats) {
    validated.repeats.push_back(repeat->name);
    validated.measured_repeats.push_back(trace::summarize(trace::read_csv_file(repeat->trace)));
  }
  std::tie(validated.measured_partitions_per_s, validated.measured_gpu_utilization) =
      median_rate_and_utilization(validated.measured_repeats);
  return {std::move(validated), parse_scenario_text(text, (folder / "scenario.toml").string(), folder).base};
}

// Simulates each point's scenario with seeds 1..seeds in child processes, keeps seed 1's trace
// in the point's folder, and scores the medians against the measured ones.
void simulate_points(const std::vector<Scenario>& scenarios, const ValidationOptions& options, ValidationResult& result) {
  const std::size_t seeds = std::max<std::size_t>(1, options.seeds);
  const std::vector<std::string> outputs = run_in_children(
      scenarios.size() * seeds,
      [&](std::size_t job) {
        const Scenario seeded = with_setting(scenarios[job / seeds], "seed", std::to_string(job % seeds + 1));
        return serialize_result(simulate_in_this_process(seeded));
      },
      std::max<std::size_t>(1, options.parallel));
  for (std::size_t point = 0; point < scenarios.size(); ++point) {
    ValidatedRun& run = result.runs[point];
    for (std::size_t seed = 0; seed < seeds; ++seed) {
      const SimulationResult simulated =
          deserialize_result(fmt::format("simulation of {} (seed {})", run.name, seed + 1), outputs[point * seeds + seed]);
      if (seed == 0) {
        const fs::path csv = options.output / run.name / "simulated.csv";
        trace::write_csv_file(csv, simulated.spans);
        trace::write_sidecar(trace::sidecar_path_for(csv), simulation_sidecar(scenarios[point], simulated));
      }
      run.simulated_seeds.push_back(trace::summarize(simulated.spans));
    }
    std::tie(run.simulated_partitions_per_s, run.simulated_gpu_utilization) = median_rate_and_utilization(run.simulated_seeds);
    run.throughput_error_pct = run.measured_partitions_per_s > 0
                                   ? 100 * (run.simulated_partitions_per_s - run.measured_partitions_per_s) /
                                         run.measured_partitions_per_s
                                   : INFINITY;
    run.utilization_points = 100 * (run.simulated_gpu_utilization - run.measured_gpu_utilization);
    result.mean_abs_throughput_error_pct += std::abs(run.throughput_error_pct) / double(scenarios.size());
    result.max_abs_utilization_points = std::max(result.max_abs_utilization_points, std::abs(run.utilization_points));
  }
}

}  // namespace

ValidationResult validate(const ValidationOptions& options) {
  const std::vector<MeasuredRun> runs = find_measured_runs(options.traces);
  const ValidationSplit split = split_runs(runs, options.calibrate_on, options.only);
  if (split.calibration.empty() || split.held_out.empty())
    throw std::runtime_error(fmt::format("{}: {} measured run(s), {} to calibrate on and {} held out: need both",
                                         options.traces.string(), runs.size(), split.calibration.size(),
                                         split.held_out.size()));
  fs::create_directories(options.output);
  std::vector<fs::path> base;
  for (const fs::path& file : options.base_calibration) base.push_back(fs::absolute(file));

  ValidationResult result;
  for (const MeasuredRun& run : split.calibration) result.calibration_runs.push_back(run.name);
  WorkloadCalibrations calibrations(split.calibration, options.output, result.fit_reports);
  std::vector<Scenario> scenarios;  // per point
  for (const auto& repeats : held_out_points(split.held_out)) {
    auto [validated, scenario] = prepare_point(repeats, split, base, calibrations, options.output);
    result.runs.push_back(std::move(validated));
    scenarios.push_back(std::move(scenario));
  }
  simulate_points(scenarios, options, result);
  zk::write_text_atomically(options.output / "validation.md", format_validation(result));
  return result;
}

std::string format_validation(const ValidationResult& result) {
  std::string text = fmt::format(
      "Calibrated on {} run(s): {}\n\n"
      "| held-out point | measured runs | calibrated on | measured partitions/s | simulated partitions/s | error | "
      "measured GPU util | simulated GPU util | difference |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|---:|\n",
      result.calibration_runs.size(), fmt::join(result.calibration_runs, ", "));
  for (const ValidatedRun& run : result.runs)
    text += fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:+.1f} % | {:.1f} % | {:.1f} % | {:+.1f} pt |\n", run.name,
                        run.repeats.size(), run.calibrated_on, run.measured_partitions_per_s,
                        run.simulated_partitions_per_s, run.throughput_error_pct, 100 * run.measured_gpu_utilization,
                        100 * run.simulated_gpu_utilization, run.utilization_points);
  const bool throughput_met = result.mean_abs_throughput_error_pct <= 5;
  const bool utilization_met = result.max_abs_utilization_points <= 5;
  const std::size_t seeds = result.runs.empty() ? 0 : result.runs.front().simulated_seeds.size();
  text += fmt::format("\nMeasured: the median over a point's runs (a run and its repeats <run>-r<k>); simulated: the "
                      "median over {} seeds (synthesis times drawn from the calibration's).\n"
                      "mean |throughput error| {:.2f} % over {} held-out point(s) (target <= 5 %: {})\n",
                      seeds, result.mean_abs_throughput_error_pct, result.runs.size(), throughput_met ? "met" : "NOT met");
  const auto worst = std::ranges::max_element(
      result.runs, {}, [](const ValidatedRun& run) { return std::abs(run.throughput_error_pct); });
  if (worst != result.runs.end())
    text += fmt::format("worst throughput error {:+.1f} % ({})\n", worst->throughput_error_pct, worst->name);
  text += fmt::format("max |GPU utilization difference| {:.2f} points (target <= 5 points: {})\n",
                      result.max_abs_utilization_points, utilization_met ? "met" : "NOT met");
  return text;
}

}  // namespace zkpipe::model
