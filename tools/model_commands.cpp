#include "model_commands.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <limits>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibration.hpp"
#include "engine/circom/circom_job.hpp"
#include "engine/util/atomic_file.hpp"
#include "guarded_command.hpp"
#include "import_command.hpp"
#include "compare.hpp"
#include "report.hpp"
#include "scenario.hpp"
#include "sidecar_facts.hpp"
#include "simulation.hpp"
#include "sweep.hpp"
#include "validation.hpp"
#include "trace/perfetto.hpp"
#include "trace/sidecar.hpp"
#include "trace/summary.hpp"
#include "trace/trace_csv.hpp"

namespace zkpipe::tools {

namespace {

using namespace zkpipe::model;

Scenario scenario_with_settings(const std::string& path, const std::vector<std::string>& settings,
                                std::optional<std::uint64_t> seed) {
  Scenario scenario = load_scenario_file(path).base;
  for (const std::string& setting : settings) {
    const auto equals = setting.find('=');
    if (equals == std::string::npos)
      throw std::runtime_error(fmt::format("--set {}: expected KEY=VALUE, e.g. --set policy.staging='\"pageable\"'", setting));
    scenario = with_setting(scenario, setting.substr(0, equals), setting.substr(equals + 1));
  }
  if (seed) scenario = with_setting(scenario, "seed", std::to_string(*seed));
  return scenario;
}

// A circom circuit as the workload: constraints, the shares of 0 and 1 scalars, and those B1 and
// B2 leave out where the key splits B, from its .zkey and .wtns (zk::circom::describe_circom_workload).
Scenario with_circom_workload(Scenario scenario, const std::vector<std::string>& zkey_and_wtns) {
  const auto w = zk::circom::describe_circom_workload(zkey_and_wtns.at(0), zkey_and_wtns.at(1));
  const double vars = std::max<double>(1, w.num_vars);
  const double zeros = w.zero_scalars / vars, ones = w.one_scalars / vars;
  const bool splits_b = zk::groth16::splits_b_query(w.b_absent_vars, w.num_vars);
  // Each share as the double it is (the scenario's bounds then see the same sums).
  const auto share = [&](std::string_view key, double value) {
    scenario = with_setting(scenario, fmt::format("workload.{}", key), fmt::format("{}", value));
  };
  scenario = with_setting(scenario, "workload.constraints_per_partition", std::to_string(std::max<uint64_t>(1, w.num_constraints)));
  share("zero_scalar_share", zeros);
  share("one_scalar_share", ones);
  share("b_absent_one_share", splits_b ? std::min(ones, w.b_absent_one_scalars / vars) : 0.0);
  share("b_absent_significant_share", splits_b ? std::min(1 - zeros - ones, w.b_absent_other_scalars / vars) : 0.0);
  std::cout << fmt::format("workload from circom: {} constraints, domain 2^{}, {} variables, {:.1f}% of scalars 0 or 1; "
                           "{} variables absent from B ({})\n",
                           w.num_constraints, w.lg_domain, w.num_vars, 100.0 * w.zero_one_share(), w.b_absent_vars,
                           splits_b ? fmt::format("B1 and B2 leave out {} of the witness's other scalars", w.b_absent_other_scalars)
                                    : std::string("fewer than 1/16: B1 and B2 take the whole witness"));
  return scenario;
}

void add_simulate(CLI::App& app) {
  struct Options {
    std::string scenario, trace_csv, chrome_trace;
    std::vector<std::string> settings, circom;
    std::optional<std::uint64_t> seed;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand("simulate", "Simulate one scenario with the SimGrid model");
  command->add_option("--circom", options->circom, "take the workload from a circom circuit: ZKEY WTNS")
      ->expected(2)->check(CLI::ExistingFile);
  command->add_option("scenario", options->scenario, "scenario TOML file")->required()->check(CLI::ExistingFile);
  command->add_option("--seed", options->seed, "seed for injected faults (overrides the scenario's)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t(std::numeric_limits<std::int64_t>::max())));  // a TOML integer
  command->add_option("--set", options->settings, "override a key: --set policy.pool_slabs=8 (value in TOML)");
  command->add_option("-o,--trace", options->trace_csv, "write the simulated trace CSV here (and its .json sidecar)");
  command->add_option("--perfetto", options->chrome_trace, "write a Chrome/Perfetto trace JSON here");
  command->callback(guarded("simulate", [options] {
    Scenario scenario = scenario_with_settings(options->scenario, options->settings, options->seed);
    if (!options->circom.empty()) scenario = with_circom_workload(std::move(scenario), options->circom);
    const auto started = std::chrono::steady_clock::now();
    if (!scenario.device_plan_change.empty()) std::cout << fmt::format("device memory: {}\n", scenario.device_plan_change);
    const SimulationResult result = simulate(scenario);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::cout << fmt::format("scenario {} (staging {}, {} synthesis threads, {} pool slabs, seed {})\n", scenario.name,
                             policy::staging_name(scenario.policy_settings().staging), scenario.policy.synthesis_threads,
                             scenario.policy.pool_slabs, scenario.seed)
              << trace::format_summary(trace::summarize(result.spans))
              << fmt::format("proved {}, failed {}, failed attempts {}; {} activities simulated in {:.3f} s\n",
                             result.proved, result.failed, result.failed_attempts, result.activities, wall_s);
    if (!options->trace_csv.empty()) {
      trace::write_csv_file(options->trace_csv, result.spans);
      trace::write_sidecar(trace::sidecar_path_for(options->trace_csv), simulation_sidecar(scenario, result));
    }
    if (!options->chrome_trace.empty()) trace::write_chrome_trace(options->chrome_trace, result.spans);
  }));
}

void add_sweep(CLI::App& app) {
  struct Options {
    std::string scenario, output = "sweep.csv";
    std::size_t parallel = std::max(1u, std::thread::hardware_concurrency());
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand("sweep", "Simulate every point of a scenario's [sweep], one process per point");
  command->add_option("scenario", options->scenario, "scenario TOML file with a [sweep] table")->required()->check(CLI::ExistingFile);
  command->add_option("-o,--output", options->output, "results CSV")->capture_default_str();
  command->add_option("-j,--jobs", options->parallel, "simulations in parallel (default: cores)")->check(CLI::Range(1, 4096));
  command->callback(guarded("sweep", [options] {
    const LoadedScenario loaded = load_scenario_file(options->scenario);
    const auto started = std::chrono::steady_clock::now();
    const bool terminal = ::isatty(STDERR_FILENO);
    const SweepTable table = run_sweep(loaded.sweep_points, options->parallel, [&](std::size_t done, std::size_t total) {
      const int filled = int(40 * done / total);
      // on a terminal one bar redrawn in place; in a log one line per finished point
      std::cerr << fmt::format("{}[{:<40}] {}/{} points{}", terminal ? "\r" : "", std::string(std::size_t(filled), '#'),
                               done, total, terminal && done < total ? "" : "\n")
                << std::flush;
    });
    write_sweep_csv(options->output, table);
    std::cout << format_sweep_table(table, {"gpu_utilization", "partitions_per_s", "h2d_gbps", "wait_pool_s"});
    std::cout << fmt::format("{} points in {:.2f} s with {} processes in parallel; table in {}\n", table.rows.size(),
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                             options->parallel, options->output);
  }));
}

void add_calibrate(CLI::App& app) {
  struct Options {
    std::vector<std::string> traces;
    std::string h2d_benchmark, output, table_markdown;
    std::optional<double> link_gbps;
    int table_threads = 16;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand("calibrate", "Fit the model's parameters from traces and/or an H2D benchmark");
  command->add_option("traces", options->traces, "trace CSV files in the shared schema (each with its .json sidecar)")
      ->check(CLI::ExistingFile);
  command->add_option("--h2d-benchmark", options->h2d_benchmark, "H2D benchmark CSV (mode,thrash_threads,h2d_GBps,thrash_GBps)")
      ->check(CLI::ExistingFile);
  command->add_option("--pcie-h2d-gbps", options->link_gbps, "PCIe link rate under the benchmark (default: its idle pinned rate)");
  command->add_option("--table-threads", options->table_threads, "predict H2D GB/s for 0..N loading threads")->capture_default_str()
      ->check(CLI::Range(0, 256));
  command->add_option("--table-markdown", options->table_markdown, "also write the H2D prediction table (markdown) here");
  command->add_option("-o,--output", options->output, "calibration TOML to write")->required();
  command->callback(guarded("calibrate", [options] {
    if (options->traces.empty() && options->h2d_benchmark.empty())
      throw std::runtime_error("nothing to fit: give trace files and/or --h2d-benchmark CSV");
    CalibrationFit fit;
    std::vector<std::string> sources;
    std::vector<H2dBenchmarkRow> benchmark;
    if (!options->traces.empty()) {
      merge_fit(fit, fit_traces({options->traces.begin(), options->traces.end()}));
      sources.push_back(fmt::format("traces {}", fmt::join(options->traces, ", ")));
    }
    if (!options->h2d_benchmark.empty()) {
      benchmark = read_h2d_benchmark(options->h2d_benchmark);
      merge_fit(fit, fit_h2d_benchmark(benchmark, options->link_gbps));
      sources.push_back(fmt::format("H2D benchmark {}", options->h2d_benchmark));
    }
    std::cout << format_fit_reports(fit.reports);
    zk::write_text_atomically(options->output,
                              calibration_toml(fit, fmt::format("fitted by zkpipe calibrate from {}", fmt::join(sources, " and "))));
    // The prediction table needs the link rate: given, or the benchmark's idle pinned rate.
    if (fit.h2d_pinned && fit.h2d_pageable && (options->link_gbps || !benchmark.empty())) {
      const double link = options->link_gbps ? *options->link_gbps : idle_pinned_gbps(benchmark);
      const std::string table = h2d_prediction_table(fit, link, options->table_threads, benchmark);
      std::cout << fmt::format("\npredicted H2D bandwidth (PCIe link {:.2f} GB/s):\n{}", link, table);
      if (!options->table_markdown.empty()) zk::write_text_atomically(options->table_markdown, table);
    }
    std::cout << fmt::format("calibration written to {}\n", options->output);
  }));
}

void add_compare(CLI::App& app) {
  auto traces = std::make_shared<std::vector<std::string>>();
  CLI::App* command = app.add_subcommand(
      "compare", "Error of simulated traces against measured ones, per metric: MEASURED SIMULATED [MEASURED SIMULATED]...");
  command->add_option("traces", *traces, "pairs of trace CSVs, measured then simulated")->required()->check(CLI::ExistingFile);
  command->callback(guarded("compare", [traces] {
    if (traces->size() % 2 != 0)
      throw std::runtime_error(fmt::format("an odd number of traces ({}): give pairs, MEASURED SIMULATED, one pair per run", traces->size()));
    std::vector<ComparedRun> runs;
    for (std::size_t i = 0; i < traces->size(); i += 2) {
      const auto measured = trace::summarize(trace::read_csv_file((*traces)[i]));
      const auto simulated = trace::summarize(trace::read_csv_file((*traces)[i + 1]));
      runs.push_back({(*traces)[i], compare_summaries(measured, simulated)});
    }
    std::cout << (runs.size() == 1 ? format_comparison(runs.front().errors) : format_comparison_of_runs(runs));
  }));
}

// A trace CSV, or a run's folder holding trace.csv.
std::filesystem::path trace_file(const std::string& path) {
  const std::filesystem::path given(path);
  if (!std::filesystem::is_directory(given)) return given;
  if (!std::filesystem::exists(given / "trace.csv"))
    throw std::runtime_error(fmt::format("{}: a folder without trace.csv: give a trace CSV or a run's folder", path));
  return given / "trace.csv";
}

// A trace's name on the page: its folder and file ("new-poseidon-merkle-24-pinned/trace.csv").
std::string trace_label(const std::filesystem::path& trace) {
  const std::filesystem::path folder = trace.parent_path().filename();
  return (folder.empty() ? trace.filename() : folder / trace.filename()).string();
}

// A trace on the page, named by its source and its file.
ReportRun report_run(const std::filesystem::path& trace) {
  trace::Trace spans = trace::read_csv_file(trace);
  if (spans.empty()) throw std::runtime_error(fmt::format("{}: the trace has no spans: nothing to report", trace.string()));
  return {fmt::format("{}: {}", trace::source_name(spans.front().source), trace_label(trace)), std::move(spans)};
}

// The heatmap's measured points: the reported run where its sidecar says how it was staged, and
// every measured run below `folder` (if given).
std::vector<MeasuredPoint> measured_points(const std::filesystem::path& trace, const trace::Trace& spans,
                                           const std::string& folder) {
  std::vector<MeasuredPoint> points;
  const std::filesystem::path sidecar = trace::sidecar_path_for(trace);
  if (folder.empty() && std::filesystem::exists(sidecar))
    if (auto point = heatmap_point(trace.parent_path().filename().string(), trace::read_sidecar(sidecar), spans)) points.push_back(*point);
  if (!folder.empty())
    for (const MeasuredRun& run : find_measured_runs(folder))
      if (auto point = heatmap_point(run.name, run.sidecar, trace::read_csv_file(run.trace)); point && !run.stage_alone)
        points.push_back(*point);
  return points;
}

void add_report(CLI::App& app) {
  struct Options {
    std::string trace, simulated, scenario, validation, sweep, sweep_measured, output = "report.html", title;
    std::string chart_library = default_chart_library_path().string();
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "report", "An HTML report of a trace, or of a measured trace beside its simulation (ECharts, inlined: works offline)");
  command->add_option("trace", options->trace, "trace CSV or a run's folder (measured or simulated)")->required()
      ->check(CLI::ExistingPath);
  auto* simulated = command->add_option("--simulated", options->simulated, "simulated trace CSV (or folder) to put beside it")
      ->check(CLI::ExistingPath);
  command->add_option("--scenario", options->scenario, "simulate this scenario (e.g. zkpipe validate's <run>/scenario.toml) to put beside it")
      ->check(CLI::ExistingFile)->excludes(simulated);
  command->add_option("--validation", options->validation, "validation.md from zkpipe validate (the validation table)")
      ->check(CLI::ExistingFile);
  command->add_option("--sweep", options->sweep, "sweep CSV from zkpipe sweep (the utilization heatmap)")->check(CLI::ExistingFile);
  command->add_option("--sweep-measured", options->sweep_measured,
                      "mark the measured runs below this folder on the heatmap (default: the reported run)")
      ->check(CLI::ExistingDirectory);
  command->add_option("-o,--output", options->output, "HTML file to write")->capture_default_str();
  command->add_option("--title", options->title, "page title (default: the trace file name)");
  command->add_option("--chart-library", options->chart_library, "ECharts' echarts.min.js, inlined into the page")
      ->capture_default_str();
  command->callback(guarded("report", [options] {
    const std::string chart_library = read_chart_library(options->chart_library);
    const std::filesystem::path trace = trace_file(options->trace);
    ReportInputs inputs;
    inputs.title = options->title.empty() ? "zkpipe report: " + trace.string() : options->title;
    inputs.runs.push_back(report_run(trace));
    inputs.measured_points = measured_points(trace, inputs.runs.front().spans, options->sweep_measured);
    if (!options->simulated.empty()) inputs.runs.push_back(report_run(trace_file(options->simulated)));
    if (!options->scenario.empty())
      inputs.runs.push_back({"simulated: " + trace_label(options->scenario), simulate(load_scenario_file(options->scenario).base).spans});
    if (!options->validation.empty()) inputs.validation_markdown = read_validation_file(options->validation);
    if (!options->sweep.empty()) inputs.sweep = read_sweep_csv(options->sweep);
    zk::write_text_atomically(options->output, render_report(inputs, chart_library));
    std::cout << fmt::format("report written to {}\n", options->output);
  }));
}

void add_validate(CLI::App& app) {
  struct Options {
    std::string traces, output = "validation";
    std::vector<std::string> calibrate_on, only, calibration;
    std::size_t parallel = std::max(1u, std::thread::hardware_concurrency());
    std::size_t seeds = ValidationOptions{}.seeds;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "validate", "Calibrate on some measured runs, predict the others, print measured vs simulated per held-out point "
                  "(a point's runs: <run> and its repeats <run>-r<k>)");
  command->add_option("--traces", options->traces, "folder of measured runs (<run>/trace.csv + trace.json, any depth)")
      ->required()->check(CLI::ExistingDirectory);
  command->add_option("--calibrate-on", options->calibrate_on,
                      "runs to calibrate on: shell globs on run names (e.g. 'poseidon-merkle/sweep-*-s[14]'); "
                      "default: per workload, every other run in name order")->delimiter(',');
  command->add_option("--runs", options->only,
                      "only these runs (shell globs on run names, e.g. 'poseidon-merkle/sweep-*'); default: every run")
      ->delimiter(',');
  command->add_option("--calibration", options->calibration,
                      "calibration TOML read before the fit, e.g. scenarios/calibration/h200-h2d.toml (costs the "
                      "calibration runs cannot show)")->check(CLI::ExistingFile);
  command->add_option("-o,--output", options->output, "folder for calibrations, scenarios, simulated traces and validation.md")
      ->capture_default_str();
  command->add_option("-j,--jobs", options->parallel, "simulations in parallel (default: cores)")
      ->check(CLI::Range(1, 4096));
  command->add_option("--seeds", options->seeds,
                      "simulations per held-out point, seeds 1..N (each draws its synthesis times); the table shows "
                      "their median")->capture_default_str()->check(CLI::Range(1, 10000));
  command->callback(guarded("validate", [options] {
    ValidationOptions validation{options->traces, options->output, options->calibrate_on, options->only, {},
                                 options->parallel, options->seeds};
    for (const std::string& file : options->calibration) validation.base_calibration.emplace_back(file);
    const ValidationResult result = validate(validation);
    std::cout << result.fit_reports << '\n' << format_validation(result)
              << fmt::format("calibrations, scenarios, simulated traces and validation.md in {}\n", options->output);
  }));
}

}  // namespace

void add_model_commands(CLI::App& app) {
  add_simulate(app);
  add_sweep(app);
  add_calibrate(app);
  add_compare(app);
  add_report(app);
  add_validate(app);
  add_import_command(app);
}

}  // namespace zkpipe::tools
