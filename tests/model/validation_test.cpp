// Tests of the validation loop (issue 5): the model's GPU items are the engine's, the
// compute-section facts calibration recovers from simulated traces, and `validate` on the shipped
// H200 traces (calibrate on some runs, predict the others).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "calibration.hpp"
#include "sidecar_facts.hpp"
#include "simulation.hpp"
#include "test_support.hpp"
#include "trace/sidecar.hpp"
#include "trace/trace_csv.hpp"
#include "trace_attempts.hpp"
#include "validation.hpp"

namespace zkpipe::model {
namespace {

using trace::Phase;

const std::filesystem::path shipped_traces = "scenarios/calibration/traces/staging-h200-20261129T1020";

// The (phase, items) of each GPU kernel in `spans`, per partition, in start order.
std::map<std::uint32_t, std::vector<std::pair<Phase, std::uint64_t>>> kernel_items(const trace::Trace& spans) {
  std::map<std::uint32_t, std::vector<std::pair<Phase, std::uint64_t>>> kernels;
  for (const trace::Span& span : spans)
    if (trace::is_gpu_kernel(span)) kernels[span.partition].emplace_back(span.phase, span.items);
  return kernels;
}

// Each partition of the engine's shipped traces (poseidon-merkle: 70 public inputs, 0-, 1- and
// other scalars; dense: 2 public inputs, no 1-scalar but ONE, more variables than constraints),
// simulated alone with its own shape (measured_shape of its spans) and its run's variables and
// public inputs: the model's kernels are the engine's, in its order, with its items.
TEST(Validation, SimulatedItemsAreTheEngineItemsOfTheSamePartitionShape) {
  const Scenario small = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  for (const char* run : {"poseidon-merkle/pinned", "dense/pinned"}) {
    const auto trace = testing::source_dir() / shipped_traces / run / "trace.csv";
    const trace::Trace measured = trace::read_csv_file(trace);
    const trace::JobFacts job = trace::read_sidecar(trace::sidecar_path_for(trace)).scenario;
    for (const auto& [partition, measured_kernels] : kernel_items(measured)) {
      trace::Trace own;
      std::ranges::copy_if(measured, std::back_inserter(own), [&](const trace::Span& s) { return s.partition == partition; });
      const auto shape = measured_shape(own, job.variables.value());
      ASSERT_TRUE(shape) << run << " partition " << partition;
      Scenario scenario = small;
      scenario.workload.partitions = 1;
      scenario.workload.constraints_per_partition = shape->constraints;
      scenario.workload.zero_scalar_share = shape->zero_scalar_share;
      scenario.workload.one_scalar_share = shape->one_scalar_share;
      scenario.workload.b_absent_one_share = shape->b_absent_one_share;
      scenario.workload.b_absent_significant_share = shape->b_absent_significant_share;
      scenario.workload.variables = shape->variables;
      scenario.workload.public_inputs = job.public_inputs.value();
      scenario.calibration.gpu_phase_cost.clear();
      for (Phase phase : {Phase::ntt, Phase::msm_h, Phase::batch_add, Phase::msm_a, Phase::msm_b1, Phase::msm_l, Phase::msm_b2})
        scenario.calibration.gpu_phase_cost[phase] = {0.001, 0.01, std::nullopt};
      const auto simulated = kernel_items(simulate(scenario).spans);
      ASSERT_EQ(simulated.size(), 1u);
      EXPECT_EQ(simulated.begin()->second, measured_kernels) << run << " partition " << partition;
    }
  }
}

// With the key streamed (stream24: the key's points in pinned host memory), 36 chunks a partition
// cross the link inside the kernels as copies without items, as the witness upload does before
// them: the shape's witness upload is still the upload, the same as with the key on the device.
TEST(Validation, TheWitnessUploadIsNotAStreamedKeyChunk) {
  const auto folder = testing::source_dir() / "scenarios/calibration/traces/stream24-h200-20261203/poseidon-merkle";
  const auto streamed = measured_shape(trace::read_csv_file(folder / "after-pinned-host/trace.csv"));
  const auto on_device = measured_shape(trace::read_csv_file(folder / "after-pinned/trace.csv"));
  ASSERT_TRUE(streamed && on_device);
  EXPECT_EQ(streamed->witness_upload_bytes, on_device->witness_upload_bytes);
  EXPECT_GT(on_device->witness_upload_bytes, 500'000'000u);
}

// Simulates the small scenario with known section, assembly and verification costs; returns the fit.
CalibrationFit fit_of_simulated(const testing::ScratchDirectory& scratch, const std::string& name, bool in_section) {
  Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  scenario = with_setting(scenario, "name", fmt::format("\"{}\"", name));
  scenario = with_setting(scenario, "cpu.compute_section_host_s", "0.0125");
  scenario = with_setting(scenario, "cpu.witness_split_s", "0.025");
  scenario = with_setting(scenario, "cpu.verify_s", "0.0375");
  scenario = with_setting(scenario, "cpu.assemble_s", "0.005");
  scenario = with_setting(scenario, "cpu.assemble_in_compute_section", in_section ? "true" : "false");
  // plenty of synthesis: two workers queue for the GPU, so an assembly outside the section
  // overlaps the other worker's kernels
  scenario = with_setting(scenario, "policy.synthesis_threads", "8");
  scenario = with_setting(scenario, "policy.pool_slabs", "8");
  scenario = with_setting(scenario, "policy.partitions_in_flight", "8");
  const SimulationResult result = simulate(scenario);
  const auto csv = scratch.path() / (name + ".csv");
  trace::write_csv_file(csv, result.spans);
  trace::write_sidecar(trace::sidecar_path_for(csv), simulation_sidecar(scenario, result));
  return fit_traces({csv});
}

TEST(Calibration, RecoversTheComputeSectionWitnessSplitAssemblyAndVerificationFromSimulatedTraces) {
  testing::ScratchDirectory scratch;
  for (const bool in_section : {true, false}) {
    const CalibrationFit fit = fit_of_simulated(scratch, in_section ? "inside" : "outside", in_section);
    ASSERT_TRUE(fit.compute_section_host_s && fit.verify_s && fit.assemble_s && fit.assemble_in_compute_section &&
                fit.witness_split_s);
    // with synthesis running the CPU host is slowed by its contention, as every CPU execution is
    EXPECT_NEAR(*fit.compute_section_host_s, 0.0125, 0.0125 * 0.25);
    EXPECT_NEAR(*fit.witness_split_s, 0.025, 0.025 * 0.25);
    EXPECT_NEAR(*fit.verify_s, 0.0375, 0.0375 * 0.25);
    EXPECT_NEAR(*fit.assemble_s, 0.005, 0.005 * 0.25);
    EXPECT_EQ(*fit.assemble_in_compute_section, in_section);
    EXPECT_NE(calibration_toml(fit, "test").find(fmt::format("assemble_in_compute_section = {}", in_section)),
              std::string::npos);
  }
}

TEST(Validation, DefaultSplitAlternatesPerWorkloadAndLeavesStageAloneRunsOut) {
  std::vector<MeasuredRun> runs;
  for (const char* name : {"pm/gpu", "pm/pageable", "pm/pinned", "pm/sweep-t4-s1", "pm/sweep-t4-s2", "pm/sweep-t4-s4",
                           "pm/sweep-t4-s8", "dense/pageable", "dense/pinned"}) {
    MeasuredRun run;
    run.name = name;
    run.workload = std::string(name).substr(0, std::string(name).find('/'));
    run.stage_alone = std::string(name).ends_with("/gpu");
    runs.push_back(run);
  }
  std::ranges::sort(runs, {}, &MeasuredRun::name);
  auto names = [](const std::vector<MeasuredRun>& set) {
    std::vector<std::string> out;
    for (const MeasuredRun& run : set) out.push_back(run.name);
    return out;
  };
  const ValidationSplit split = split_runs(runs, {});
  EXPECT_EQ(names(split.calibration),
            (std::vector<std::string>{"dense/pageable", "pm/pageable", "pm/sweep-t4-s1", "pm/sweep-t4-s4"}));
  EXPECT_EQ(names(split.held_out),
            (std::vector<std::string>{"dense/pinned", "pm/pinned", "pm/sweep-t4-s2", "pm/sweep-t4-s8"}));
  const ValidationSplit chosen = split_runs(runs, {"*/pinned", "pm/sweep-*-s[12]"});
  EXPECT_EQ(names(chosen.calibration),
            (std::vector<std::string>{"dense/pinned", "pm/pinned", "pm/sweep-t4-s1", "pm/sweep-t4-s2"}));
  EXPECT_EQ(chosen.held_out.size(), 4u);
  const ValidationSplit sweep_only = split_runs(runs, {}, {"pm/sweep-*"});
  EXPECT_EQ(names(sweep_only.calibration), (std::vector<std::string>{"pm/sweep-t4-s1", "pm/sweep-t4-s4"}));
  EXPECT_EQ(names(sweep_only.held_out), (std::vector<std::string>{"pm/sweep-t4-s2", "pm/sweep-t4-s8"}));
}

TEST(Validation, RepeatsOfAPointShareItsNameAndItsSideOfTheSplit) {
  EXPECT_EQ(measured_point("pm/sweep-t4-s2-r3"), "pm/sweep-t4-s2");
  EXPECT_EQ(measured_point("pm/sweep-t4-s2"), "pm/sweep-t4-s2");
  EXPECT_EQ(measured_point("pm/sweep-r"), "pm/sweep-r");
  EXPECT_EQ(measured_point("pm/run-r1x"), "pm/run-r1x");
  EXPECT_EQ(measured_point("pm-r1/pinned"), "pm-r1/pinned");
  std::vector<MeasuredRun> runs;
  for (const char* name : {"pm/sweep-t4-s1", "pm/sweep-t4-s2", "pm/sweep-t4-s2-r1", "pm/sweep-t4-s2-r2",
                           "pm/sweep-t4-s4", "pm/sweep-t4-s8-r1", "pm/sweep-t4-s8-r2"}) {
    MeasuredRun run;
    run.name = name;
    run.workload = "pm";
    runs.push_back(run);
  }
  const ValidationSplit split = split_runs(runs, {});
  std::vector<std::string> calibration, held_out;
  for (const MeasuredRun& run : split.calibration) calibration.push_back(run.name);
  for (const MeasuredRun& run : split.held_out) held_out.push_back(run.name);
  EXPECT_EQ(calibration, (std::vector<std::string>{"pm/sweep-t4-s1", "pm/sweep-t4-s4"}));
  EXPECT_EQ(held_out, (std::vector<std::string>{"pm/sweep-t4-s2", "pm/sweep-t4-s2-r1", "pm/sweep-t4-s2-r2",
                                                "pm/sweep-t4-s8-r1", "pm/sweep-t4-s8-r2"}));
}

// `zkpipe validate` over a shipped experiment (`folder` below the source tree), with the H200's H2D
// calibration first, as the README's commands run it.
ValidationResult validate_shipped(const testing::ScratchDirectory& scratch, std::vector<std::string> calibrate_on,
                                  const std::filesystem::path& folder = shipped_traces,
                                  std::vector<std::string> only = {}) {
  ValidationOptions options;
  options.traces = testing::source_dir() / folder;
  options.output = scratch.path() / "validation";
  options.calibrate_on = std::move(calibrate_on);
  options.only = std::move(only);
  options.base_calibration = {testing::source_dir() / "scenarios/calibration/h200-h2d.toml"};
  options.parallel = 2;
  return validate(options);
}

TEST(Validation, PredictsTheShippedH200RunsHeldOutOfTheCalibration) {
  testing::ScratchDirectory scratch;
  const ValidationResult result = validate_shipped(scratch, {});
  EXPECT_EQ(result.calibration_runs, (std::vector<std::string>{"dense/pageable", "poseidon-merkle/pageable"}));
  ASSERT_EQ(result.runs.size(), 2u);
  EXPECT_EQ(result.runs[0].name, "dense/pinned");
  EXPECT_EQ(result.runs[1].name, "poseidon-merkle/pinned");
  const std::string table = format_validation(result);
  for (const ValidatedRun& run : result.runs) {
    EXPECT_EQ(run.calibrated_on, run.name.starts_with("dense") ? "dense-1000000" : "poseidon-merkle-975590");
    EXPECT_EQ(run.simulated_seeds.front().partitions_completed, run.measured_repeats.front().partitions_completed) << run.name;
    EXPECT_TRUE(std::isfinite(run.throughput_error_pct)) << run.name;
    EXPECT_TRUE(std::isfinite(run.utilization_points)) << run.name;
    EXPECT_GT(run.simulated_gpu_utilization, 0.5) << run.name;
    EXPECT_NE(table.find("| " + run.name + " |"), std::string::npos) << table;
    EXPECT_TRUE(std::filesystem::exists(scratch.path() / "validation" / run.name / "simulated.csv"));
    EXPECT_TRUE(std::filesystem::exists(scratch.path() / "validation" / run.name / "scenario.toml"));
  }
  const ValidatedRun& worst = std::abs(result.runs[0].throughput_error_pct) >= std::abs(result.runs[1].throughput_error_pct)
                                  ? result.runs[0]
                                  : result.runs[1];
  EXPECT_NE(table.find(fmt::format("worst throughput error {:+.1f} % ({})", worst.throughput_error_pct, worst.name)),
            std::string::npos)
      << table;
  EXPECT_TRUE(std::isfinite(result.mean_abs_throughput_error_pct));
  std::stringstream written;
  written << std::ifstream(scratch.path() / "validation" / "validation.md").rdbuf();
  EXPECT_EQ(written.str(), table);
}

// Calibrated on the pinned runs, the pageable ones: the pageable copies come from the H2D
// benchmark fit, everything else from the pinned runs. Mean error 5.5 % (1.9 % before synthesis
// times varied in the model): the pageable runs synthesized 8 partitions at once, exactly half
// of them ~1.5x slower than the other half, where independent draws from the pinned runs' times
// often make more than half fast (model/README.md); utilization within 3.4 points.
TEST(Validation, CalibratedOnPinnedRunsPredictsPageableOnes) {
  testing::ScratchDirectory scratch;
  const ValidationResult result = validate_shipped(scratch, {"*/pinned"});
  ASSERT_EQ(result.runs.size(), 2u);
  EXPECT_LE(result.mean_abs_throughput_error_pct, 6.0) << format_validation(result);
  EXPECT_LE(result.max_abs_utilization_points, 5.0) << format_validation(result);
}

// The H200 sweep at 2^22 (synthesis threads {4,8,12,16} x slabs {1,2,4,8}): calibrated on slabs
// {1, 4}, slabs {2, 8} predicted (median of 101 seeds) against the median of each held-out point's
// four runs (the sweep's and three repeats): mean error 3.0 %, utilization within 2.3 points, the
// issue's targets being 5 % and 5 points (the README's table; with one run per point 5.3 % and 4.7
// points, the rest being run-to-run noise of synthesis, model/README.md).
TEST(Validation, PredictsTheH200SweepFromHalfOfIt) {
  testing::ScratchDirectory scratch;
  const ValidationResult result = validate_shipped(scratch, {}, "scenarios/calibration/traces/staging-h200-20261129T1157",
                                                   {"poseidon-merkle/sweep-*"});
  ASSERT_EQ(result.calibration_runs.size(), 8u);
  ASSERT_EQ(result.runs.size(), 8u);
  for (const ValidatedRun& run : result.runs) {
    EXPECT_TRUE(run.name.ends_with("-s2") || run.name.ends_with("-s8")) << run.name;
    EXPECT_EQ(run.simulated_seeds.front().partitions_completed, run.measured_repeats.front().partitions_completed) << run.name;
    EXPECT_EQ(run.measured_repeats.size(), 4u) << run.name;
  }
  EXPECT_LE(result.mean_abs_throughput_error_pct, 5.0) << format_validation(result);
  EXPECT_LE(result.max_abs_utilization_points, 5.0) << format_validation(result);
}

// Two H200s on one host (issue 8): calibrated on the threads {4,16} x slabs {1,2,8} sweep at 2^22
// run on one of the GPUs, the same sweep on both predicted. Measured once per point: mean error
// 8.4 %, utilization within 7.8 points (11.5 % and 16.3 before the model had the engine's per-thread
// core share of synthesis; the fit finds a parallel fraction of 0.95).
TEST(Validation, PredictsTwoGpusFromOneOnTheSameHost) {
  testing::ScratchDirectory scratch;
  const ValidationResult result = validate_shipped(scratch, {"sweep-one-gpu/*"},
                                                   "scenarios/calibration/traces/staging-h200x2-20261129", {"sweep-*"});
  ASSERT_EQ(result.calibration_runs.size(), 6u);
  ASSERT_EQ(result.runs.size(), 6u);
  for (const ValidatedRun& run : result.runs) EXPECT_TRUE(run.name.starts_with("sweep-two-gpus/")) << run.name;
  EXPECT_LE(result.mean_abs_throughput_error_pct, 10.0) << format_validation(result);
  EXPECT_LE(result.max_abs_utilization_points, 10.0) << format_validation(result);
}

// A point measured three times is compared by the median of its runs.
TEST(Validation, ComparesAPointMeasuredSeveralTimesByTheMedianOfItsRuns) {
  testing::ScratchDirectory scratch;
  const std::filesystem::path sweep =
      testing::source_dir() / "scenarios/calibration/traces/staging-h200-20261129T1157/poseidon-merkle";
  auto copy_run = [&](const std::string& from, const std::string& to) {
    std::filesystem::create_directories(scratch.path() / "traces/pm" / to);
    for (const char* file : {"trace.csv", "trace.json"})
      std::filesystem::copy_file(sweep / from / file, scratch.path() / "traces/pm" / to / file);
  };
  for (const char* run : {"sweep-t4-s1", "sweep-t4-s4", "sweep-t8-s1", "sweep-t8-s4"}) copy_run(run, run);
  copy_run("sweep-t4-s2", "sweep-t4-s2");  // and two stand-ins for repeats of it
  copy_run("sweep-t8-s2", "sweep-t4-s2-r1");
  copy_run("sweep-t12-s2", "sweep-t4-s2-r2");
  ValidationOptions options;
  options.traces = scratch.path() / "traces";
  options.output = scratch.path() / "validation";
  options.calibrate_on = {"pm/sweep-*-s1", "pm/sweep-*-s4"};
  options.base_calibration = {testing::source_dir() / "scenarios/calibration/h200-h2d.toml"};
  options.parallel = 2;
  options.seeds = 3;
  const ValidationResult result = validate(options);
  ASSERT_EQ(result.runs.size(), 1u) << format_validation(result);
  const ValidatedRun& point = result.runs.front();
  EXPECT_EQ(point.name, "pm/sweep-t4-s2");
  EXPECT_EQ(point.repeats, (std::vector<std::string>{"pm/sweep-t4-s2", "pm/sweep-t4-s2-r1", "pm/sweep-t4-s2-r2"}));
  ASSERT_EQ(point.measured_repeats.size(), 3u);
  std::vector<double> rates;
  for (const trace::TraceSummary& repeat : point.measured_repeats) rates.push_back(repeat.partitions_per_s);
  std::ranges::sort(rates);
  EXPECT_LT(rates.front(), rates[1]);
  EXPECT_DOUBLE_EQ(point.measured_partitions_per_s, rates[1]);
  ASSERT_EQ(point.simulated_seeds.size(), 3u);
  EXPECT_NE(point.simulated_seeds[0].partitions_per_s, point.simulated_seeds[1].partitions_per_s)
      << "each seed draws its synthesis times";
  EXPECT_NE(format_validation(result).find("| pm/sweep-t4-s2 | 3 |"), std::string::npos) << format_validation(result);
}

TEST(Validation, AMeasuredRunIsPredictedWithItsPinnedPoolLayout) {
  const std::filesystem::path run_folder =
      testing::source_dir() / "scenarios/calibration/traces/staging-h200-20261129T1157/poseidon-merkle/sweep-t4-s2";
  std::vector<MeasuredRun> runs = find_measured_runs(run_folder);
  ASSERT_EQ(runs.size(), 1u);
  MeasuredRun run = runs.front();
  const std::filesystem::path h2d = testing::source_dir() / "scenarios/calibration/h200-h2d.toml";
  auto pool_layout = [&] {
    return toml::parse(scenario_toml_for_run(run, {h2d}))["policy"]["pool_layout"].value_or(std::string());
  };
  EXPECT_EQ(pool_layout(), "per-host") << "traced before the setting existed: one pool per host";
  run.sidecar.settings.job.pool_layout = policy::PoolLayout::per_gpu;
  EXPECT_EQ(pool_layout(), "per-gpu");
}

TEST(Validation, AFolderWithoutRunsToHoldOutIsAnError) {
  testing::ScratchDirectory scratch;
  ValidationOptions options;
  options.traces = testing::source_dir() / shipped_traces;
  options.output = scratch.path() / "validation";
  options.calibrate_on = {"*"};  // everything calibrates, nothing is left to predict
  EXPECT_THROW(validate(options), std::runtime_error);
}

}  // namespace
}  // namespace zkpipe::model
