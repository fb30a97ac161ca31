// Tests of calibration: the fit of the shipped H200 H2D measurements, and recovering known
// parameters from simulated traces written with their sidecars.
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "calibration.hpp"
#include "compare.hpp"
#include "gpu_kernels.hpp"
#include "sidecar_facts.hpp"
#include "simulation.hpp"
#include "test_support.hpp"
#include "trace/sidecar.hpp"
#include "trace/summary.hpp"
#include "trace/trace_csv.hpp"

namespace zkpipe::model {
namespace {

// The small scenario (test_support.hpp) with each (key, TOML value) of `settings` set over it.
Scenario small_scenario_with(std::initializer_list<std::pair<const char*, const char*>> settings) {
  Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  for (const auto& [key, value] : settings) scenario = with_setting(scenario, key, value);
  return scenario;
}

// Simulates `scenario` and writes its trace to `path` with its sidecar, as calibration reads them.
SimulationResult write_simulated_trace(const Scenario& scenario, const std::filesystem::path& path) {
  SimulationResult result = simulate(scenario);
  trace::write_csv_file(path, result.spans);
  trace::write_sidecar(trace::sidecar_path_for(path), simulation_sidecar(scenario, result));
  return result;
}

TEST(Calibration, H200BenchmarkFitReproducesEveryMeasurementWithinThreePercent) {
  const auto rows = read_h2d_benchmark(testing::source_dir() / "scenarios/calibration/h200-h2d.csv");
  ASSERT_EQ(rows.size(), 9u);
  const CalibrationFit fit = fit_h2d_benchmark(rows, std::nullopt);
  const double link = idle_pinned_gbps(rows);
  for (const H2dBenchmarkRow& row : rows) {
    const H2dPathCost& path = row.mode == "pageable" ? *fit.h2d_pageable : *fit.h2d_pinned;
    EXPECT_NEAR(path.rate_gbps(link, row.thrash_threads), row.h2d_gbps, 0.03 * row.h2d_gbps) << row.mode << " "
                                                                                              << row.thrash_threads;
  }
  // more memory load never speeds a copy up, across the table's range
  for (int threads = 1; threads <= 16; ++threads) {
    EXPECT_LE(fit.h2d_pinned->rate_gbps(link, threads), fit.h2d_pinned->rate_gbps(link, threads - 1));
    EXPECT_LE(fit.h2d_pageable->rate_gbps(link, threads), fit.h2d_pageable->rate_gbps(link, threads - 1));
  }
  const std::string toml = calibration_toml(fit, "test");
  EXPECT_NE(toml.find("[h2d.pageable]"), std::string::npos);
}

TEST(Calibration, TheReadmeH2dTableIsWhatTheFitPredicts) {
  const auto rows = read_h2d_benchmark(testing::source_dir() / "scenarios/calibration/h200-h2d.csv");
  const std::string table = h2d_prediction_table(fit_h2d_benchmark(rows, std::nullopt), idle_pinned_gbps(rows), 16, rows);
  std::stringstream readme;
  readme << std::ifstream(testing::source_dir() / "model/README.md").rdbuf();
  EXPECT_NE(readme.str().find(table), std::string::npos)
      << "model/README.md's H2D table is stale; regenerate it with zkpipe calibrate --table-markdown:\n" << table;
}

TEST(Calibration, RecoversKnownParametersFromSimulatedTraces) {
  testing::ScratchDirectory scratch;
  const Scenario truth = small_scenario_with({});
  std::vector<std::filesystem::path> traces;
  for (const char* staging : {"\"pinned\"", "\"pageable\""})
    for (const char* threads : {"1", "3", "6"})
      for (const char* constraints : {"524288", "1048576"}) {
        Scenario scenario = with_setting(truth, "policy.staging", staging);
        scenario = with_setting(scenario, "policy.synthesis_threads", threads);
        scenario = with_setting(scenario, "workload.constraints_per_partition", constraints);
        scenario = with_setting(scenario, "policy.partitions_in_flight", "8");
        scenario = with_setting(scenario, "policy.pool_slabs", "8");
        traces.push_back(scratch.path() / fmt::format("trace{}.csv", traces.size()));
        write_simulated_trace(scenario, traces.back());
      }
  const CalibrationFit fit = fit_traces(traces);
  ASSERT_EQ(fit.gpu_phase_cost.size(), truth.calibration.gpu_phase_cost.size());
  for (const auto& [phase, cost] : truth.calibration.gpu_phase_cost) {
    EXPECT_NEAR(fit.gpu_phase_cost.at(phase).fixed_s, cost.fixed_s, 1e-6) << trace::phase_name(phase);
    EXPECT_NEAR(fit.gpu_phase_cost.at(phase).per_mitem_s, cost.per_mitem_s, 1e-6) << trace::phase_name(phase);
  }
  ASSERT_TRUE(fit.synth_core_s_per_mconstraint && fit.synth_slowdown_per_extra_thread);
  EXPECT_NEAR(*fit.synth_core_s_per_mconstraint, truth.calibration.synth_core_s_per_mconstraint, 0.01 * 0.5);
  EXPECT_NEAR(*fit.synth_slowdown_per_extra_thread, truth.calibration.synth_slowdown_per_extra_thread, 0.002);
  ASSERT_TRUE(fit.synth_time_factors);
  for (double factor : *fit.synth_time_factors) EXPECT_NEAR(factor, 1, 0.03) << "every synthesis took its mean time";
  ASSERT_TRUE(fit.h2d_pinned && fit.h2d_pageable);
  for (double threads : {0.0, 2.0, 4.0, 6.0}) {
    const double link = truth.hardware.pcie_h2d_gbps;
    EXPECT_NEAR(fit.h2d_pinned->rate_gbps(link, threads), truth.calibration.h2d_pinned.rate_gbps(link, threads),
                0.05 * truth.calibration.h2d_pinned.rate_gbps(link, threads)) << threads;
    EXPECT_NEAR(fit.h2d_pageable->rate_gbps(link, threads), truth.calibration.h2d_pageable.rate_gbps(link, threads),
                0.05 * truth.calibration.h2d_pageable.rate_gbps(link, threads)) << threads;
  }
  EXPECT_NEAR(*fit.assemble_s, truth.calibration.assemble_s, 1e-3);
  EXPECT_FALSE(format_fit_reports(fit.reports).empty());
}

// Runs that give their synthesis threads 8, 4 and 1 cores each (16 cores; 2, 4 and 16 threads)
// show how much of a synthesis runs in parallel: the fit finds the scenario's parallel fraction and
// its one-core time.
TEST(Calibration, RecoversTheParallelFractionOfSynthesis) {
  testing::ScratchDirectory scratch;
  const Scenario truth =
      small_scenario_with({{"hardware.cores", "16"}, {"synthesis.parallel_fraction", "0.6"}});
  std::vector<std::filesystem::path> traces;
  for (const char* threads : {"2", "4", "16"}) {
    Scenario scenario = with_setting(truth, "policy.synthesis_threads", threads);
    scenario = with_setting(scenario, "policy.partitions_in_flight", "16");
    scenario = with_setting(scenario, "policy.pool_slabs", "16");
    traces.push_back(scratch.path() / fmt::format("threads{}.csv", threads));
    write_simulated_trace(scenario, traces.back());
  }
  const CalibrationFit fit = fit_traces(traces);
  ASSERT_TRUE(fit.synth_parallel_fraction && fit.synth_core_s_per_mconstraint);
  EXPECT_NEAR(*fit.synth_parallel_fraction, 0.6, 0.05);
  EXPECT_NEAR(*fit.synth_core_s_per_mconstraint, truth.calibration.synth_core_s_per_mconstraint,
              0.05 * truth.calibration.synth_core_s_per_mconstraint);
  EXPECT_NE(calibration_toml(fit, "test").find("parallel_fraction = 0.6"), std::string::npos);
  for (const auto& [cores, factor] : fit.synth_cores_factors.value_or(std::map<std::uint32_t, double>{}))
    EXPECT_NEAR(factor, 1, 0.05) << cores << " cores: the share factor holds on every number, nothing to correct";

  // One share only (16 threads on 16 cores): p cannot be told apart and is left to the scenario.
  EXPECT_FALSE(fit_traces({traces.back()}).synth_parallel_fraction);
}

// Where syntheses on 1, 2, 4, 8 and 16 cores (whole numbers of them: the `synthesizing` rule)
// take 1.0, 0.9, 1.1, 1.0 and 0.85 times what the parallel fraction says (a shape no parallel
// fraction has),
// the fitted synthesis cost (its share factor, slowdown and correction by cores) gives each run its
// time, read back from the calibration file.
TEST(Calibration, RecoversWhatTheShareFactorMissesOnEachCoreCount) {
  testing::ScratchDirectory scratch;
  std::string text = testing::small_scenario_text();
  text.insert(text.find("[synthesis]") + 12, "factor_cores = [1, 2, 4, 8, 16]\ncores_factors = [1.0, 0.9, 1.1, 1.0, 0.85]\n");
  Scenario truth = parse_scenario_text(text, "small.toml", ".").base;
  truth = with_setting(truth, "hardware.cores", "16");
  truth = with_setting(truth, "synthesis.parallel_fraction", "0.6");
  truth = with_setting(truth, "policy.synthesis_core_share", "\"synthesizing\"");  // whole numbers of cores
  auto run = [&](const Scenario& scenario, const char* threads) {
    Scenario at = with_setting(scenario, "policy.synthesis_threads", threads);
    at = with_setting(at, "policy.partitions_in_flight", "16");
    at = with_setting(at, "policy.pool_slabs", "16");
    return at;
  };
  auto mean_synthesis_s = [](const SimulationResult& result) {
    double sum = 0, count = 0;
    for (const trace::Span& span : result.spans)
      if (span.phase == trace::Phase::synth) sum += span.duration_s(), ++count;
    return sum / count;
  };
  const std::vector<const char*> thread_counts{"1", "2", "4", "8", "16"};
  std::vector<std::filesystem::path> traces;
  std::vector<double> measured_s;
  for (const char* threads : thread_counts) {
    traces.push_back(scratch.path() / fmt::format("threads{}.csv", threads));
    measured_s.push_back(mean_synthesis_s(write_simulated_trace(run(truth, threads), traces.back())));
  }
  const CalibrationFit fit = fit_traces(traces);
  ASSERT_TRUE(fit.synth_parallel_fraction && fit.synth_cores_factors);
  std::ofstream(scratch.path() / "cal.toml") << calibration_toml(fit, "test");
  text.erase(text.find("[synthesis]"), text.find("[cpu]") - text.find("[synthesis]"));
  Scenario fitted = parse_scenario_text("calibration = \"cal.toml\"\n" + text, "s.toml", scratch.path()).base;
  fitted = with_setting(fitted, "hardware.cores", "16");
  fitted = with_setting(fitted, "policy.synthesis_core_share", "\"synthesizing\"");
  double worst_uncorrected = 0;
  for (std::size_t i = 0; i < thread_counts.size(); ++i) {
    const auto path = scratch.path() / "replay.csv";
    Scenario replay = run(fitted, thread_counts[i]);
    EXPECT_NEAR(mean_synthesis_s(write_simulated_trace(replay, path)), measured_s[i], 0.02 * measured_s[i])
        << thread_counts[i] << " threads";
    replay.calibration.synth_cores_factors.clear();
    const double error = mean_synthesis_s(write_simulated_trace(replay, path)) / measured_s[i] - 1;
    worst_uncorrected = std::max(worst_uncorrected, std::abs(error));
  }
  EXPECT_GT(worst_uncorrected, 0.04) << "the share factor alone fits this shape: the test shows nothing";
}

// Synthesis times of 0.8 and 1.25 times the mean are fitted as those factors, scaled to mean 1
// (the fitted time is their mean).
TEST(Calibration, RecoversHowSynthesisTimesVary) {
  testing::ScratchDirectory scratch;
  const Scenario scenario = small_scenario_with(
      {{"workload.partitions", "40"}, {"policy.synthesis_threads", "1"}, {"synthesis.time_factors", "[0.8, 1.25]"}});
  const auto path = scratch.path() / "trace.csv";
  const SimulationResult result = write_simulated_trace(scenario, path);
  const CalibrationFit fit = fit_traces({path});
  ASSERT_TRUE(fit.synth_time_factors && fit.synth_core_s_per_mconstraint);
  ASSERT_EQ(fit.synth_time_factors->size(), 40u);
  double mean_factor = 0;  // of the draws: 0.5 s per million constraints is the mean time
  for (const trace::Span& span : result.spans)
    if (span.phase == trace::Phase::synth) mean_factor += span.duration_s() / (0.5 * double(span.items) / 1e6) / 40;
  int fast = 0;
  for (double factor : *fit.synth_time_factors) {
    const bool is_fast = std::abs(factor - 0.8 / mean_factor) < 1e-6;
    EXPECT_TRUE(is_fast || std::abs(factor - 1.25 / mean_factor) < 1e-6) << factor;
    fast += is_fast;
  }
  EXPECT_GT(fast, 5);
  EXPECT_LT(fast, 35);
  EXPECT_NEAR(*fit.synth_core_s_per_mconstraint, 0.5 * mean_factor, 1e-6);
  const toml::table written = toml::parse(calibration_toml(fit, "test"));
  ASSERT_TRUE(written["synthesis"]["time_factors"].as_array());
  EXPECT_EQ(written["synthesis"]["time_factors"].as_array()->size(), fit.synth_time_factors->size());
}

// Where a worker's host work takes 1, 1.6 and 2.4 times its cost beside none, one and two
// syntheses (two workers, so that verification and splits run during syntheses), the fit finds
// those ratios, relative to the work's median, and the calibration file carries them.
TEST(Calibration, RecoversHowHostWorkSlowsBesideSyntheses) {
  testing::ScratchDirectory scratch;
  const Scenario truth = small_scenario_with({{"workload.partitions", "40"},
                                               {"cpu.verify_s", "0.05"},
                                               {"cpu.witness_split_s", "0.03"},
                                               {"cpu.host_work_load_factors", "[1.0, 1.6, 2.4]"}});
  std::vector<std::filesystem::path> traces;
  for (const char* threads : {"1", "2"}) {
    traces.push_back(scratch.path() / fmt::format("threads{}.csv", threads));
    write_simulated_trace(with_setting(truth, "policy.synthesis_threads", threads), traces.back());
  }
  const CalibrationFit fit = fit_traces(traces);
  ASSERT_TRUE(fit.host_work_load_factors);
  ASSERT_GE(fit.host_work_load_factors->size(), 3u);
  const std::vector<double>& factors = *fit.host_work_load_factors;
  EXPECT_NEAR(factors[1] / factors[0], 1.6, 0.1);
  EXPECT_NEAR(factors[2] / factors[0], 2.4, 0.15);
  const toml::table written = toml::parse(calibration_toml(fit, "test"));
  ASSERT_TRUE(written["cpu"]["host_work_load_factors"].as_array());
  EXPECT_EQ(written["cpu"]["host_work_load_factors"].as_array()->size(), factors.size());
}

// A calibration file reads back into a scenario as the fit it was written from, each number to six
// significant digits (toml++ writes them so).
TEST(Calibration, AWrittenCalibrationReadsBackAsItsFit) {
  CalibrationFit fit;
  fit.h2d_pinned = H2dPathCost{-0.000137355123, 3.01484e-05, 1.25e-7};
  fit.h2d_pageable = H2dPathCost{0.146481234, 0.00524319, 0.000715251};
  fit.synth_core_s_per_mconstraint = 0.139254321;
  fit.synth_slowdown_per_extra_thread = 0.0834368;
  fit.synth_time_factors = std::vector<double>{0.839226, 1.266712345};
  fit.synth_parallel_fraction = 0.95;
  fit.synth_cores_factors = std::map<std::uint32_t, double>{{2, 0.937915}, {16, 1.0435167}};
  fit.synth_memory_load_threads = 1.0;
  fit.assemble_s = 0.00175981;
  fit.assemble_in_compute_section = true;
  fit.compute_section_host_s = 2.4941e-05;
  fit.witness_split_s = 0.116481;
  fit.verify_s = 0.0127343;
  fit.host_work_load_factors = std::vector<double>{0.791486, 1.113161};
  fit.gpu_phase_cost[trace::Phase::msm_a] = {0.0548077, 0.001, 0.0071234567};
  fit.gpu_phase_cost[trace::Phase::ntt] = {0.0305552, 0.0, std::nullopt};
  testing::ScratchDirectory scratch;
  std::ofstream(scratch.path() / "cal.toml") << calibration_toml(fit, "test");
  std::string text = testing::small_scenario_text();
  text = "calibration = \"cal.toml\"\n" + text.substr(0, text.find("[h2d.pinned]"));
  const Calibration read = parse_scenario_text(text, "s.toml", scratch.path()).base.calibration;
  auto expect_close = [](double read, double written) { EXPECT_NEAR(read, written, 5e-6 * std::abs(written)); };
  for (const auto& [read_path, fit_path] : {std::pair{read.h2d_pinned, *fit.h2d_pinned}, {read.h2d_pageable, *fit.h2d_pageable}}) {
    expect_close(read_path.overhead_s_per_gb, fit_path.overhead_s_per_gb);
    expect_close(read_path.per_thread_s_per_gb, fit_path.per_thread_s_per_gb);
    expect_close(read_path.per_thread_squared_s_per_gb, fit_path.per_thread_squared_s_per_gb);
  }
  expect_close(read.synth_core_s_per_mconstraint, *fit.synth_core_s_per_mconstraint);
  expect_close(read.synth_slowdown_per_extra_thread, *fit.synth_slowdown_per_extra_thread);
  ASSERT_EQ(read.synth_time_factors.size(), 2u);
  expect_close(read.synth_time_factors[1], fit.synth_time_factors->at(1));
  expect_close(read.synth_parallel_fraction, *fit.synth_parallel_fraction);
  ASSERT_EQ(read.synth_cores_factors.size(), 2u);
  expect_close(read.synth_cores_factors.at(16), fit.synth_cores_factors->at(16));
  expect_close(read.synth_memory_load_threads, *fit.synth_memory_load_threads);
  expect_close(read.assemble_s, *fit.assemble_s);
  EXPECT_TRUE(read.assemble_in_compute_section);
  expect_close(read.compute_section_host_s, *fit.compute_section_host_s);
  expect_close(read.witness_split_s, *fit.witness_split_s);
  expect_close(read.verify_s, *fit.verify_s);
  ASSERT_EQ(read.host_work_load_factors.size(), 2u);
  expect_close(read.host_work_load_factors[1], fit.host_work_load_factors->at(1));
  ASSERT_EQ(read.gpu_phase_cost.size(), 2u);
  const PhaseCost& msm_a = read.gpu_phase_cost.at(trace::Phase::msm_a);
  expect_close(msm_a.fixed_s, 0.0548077);
  expect_close(msm_a.per_mitem_s, 0.001);
  expect_close(msm_a.stream_chunk_s.value_or(0), 0.0071234567);
  EXPECT_FALSE(read.gpu_phase_cost.at(trace::Phase::ntt).stream_chunk_s);
}

// A run with the key on the device and one streaming it (one worker: nothing else holds the copy
// engine) give each phase's cost and its per-chunk cost; the streamed run alone gives the phase's
// cost where its chunks cost the default.
TEST(Calibration, RecoversThePerChunkCostOfAStreamedKey) {
  testing::ScratchDirectory scratch;
  const Scenario truth = small_scenario_with({{"workload.partitions", "4"},
                                               {"policy.workers_per_gpu", "1"},
                                               {"workload.stream_chunk_points", "300000"},
                                               {"gpu_phase_cost.msm_h.stream_chunk_s", "0.004"},
                                               {"gpu_phase_cost.msm_a.stream_chunk_s", "0.007"},
                                               {"gpu_phase_cost.msm_b2.fixed_s", "0.01"},  // G2, its chunks at the default cost
                                               {"gpu_phase_cost.msm_b2.per_mitem_s", "0.03"}});
  const auto on_device = scratch.path() / "on-device.csv", streamed = scratch.path() / "streamed.csv";
  write_simulated_trace(truth, on_device);
  write_simulated_trace(with_setting(truth, "policy.srs_residency", "\"pinned-host\""), streamed);
  const std::vector<GpuKernel> kernels = gpu_kernels(truth.workload, truth.calibration.gpu_phase_cost);
  const CalibrationFit both = fit_traces({on_device, streamed}), alone = fit_traces({streamed});
  for (const GpuKernel& kernel : kernels) {
    const trace::Phase phase = kernel.phase;
    SCOPED_TRACE(trace::phase_name(phase));
    const PhaseCost& cost = truth.calibration.gpu_phase_cost.at(phase);
    EXPECT_NEAR(both.gpu_phase_cost.at(phase).seconds(kernel.items), kernel.seconds, 1e-6);
    if (phase == trace::Phase::ntt) {
      EXPECT_FALSE(both.gpu_phase_cost.at(phase).stream_chunk_s);
    } else {
      ASSERT_TRUE(both.gpu_phase_cost.at(phase).stream_chunk_s);
      EXPECT_NEAR(*both.gpu_phase_cost.at(phase).stream_chunk_s, kernel.chunk_s, 1e-6);
    }
    if (!cost.stream_chunk_s) {  // the default: the streamed run alone gives the phase's cost
      EXPECT_NEAR(alone.gpu_phase_cost.at(phase).seconds(kernel.items), kernel.seconds, 1e-6);
    }
  }
  EXPECT_NE(calibration_toml(both, "test").find("stream_chunk_s = 0.007"), std::string::npos);
}

// Measured on the H200 (2^24, two workers, 16 threads): in the pageable run four msm_a spans
// waited for the other worker's pageable copy (0.18-0.24 s, the kernel's own 54 ms among it),
// which a mean over every span would book as kernel time (0.092 s); the pinned run has none.
TEST(Calibration, KernelsThatWaitedForAnotherWorkersPageableCopyAreLeftOutOfTheirCost) {
  const auto runs = testing::source_dir() / "scenarios/calibration/traces/checks24-h200-20261203/poseidon-merkle";
  for (const char* run : {"t16-w2-pageable-r1", "t16-w2-pinned-r1"}) {
    SCOPED_TRACE(run);
    const auto trace_csv = runs / run / "trace.csv";
    std::vector<double> msm_a_s;
    for (const trace::Span& span : trace::read_csv_file(trace_csv))
      if (span.phase == trace::Phase::msm_a) msm_a_s.push_back(span.duration_s());
    const CalibrationFit fit = fit_traces({trace_csv});
    EXPECT_NEAR(fit.gpu_phase_cost.at(trace::Phase::msm_a).fixed_s, trace::upper_median(msm_a_s), 0.001);
    const bool pageable = std::string_view(run).find("pageable") != std::string_view::npos;
    EXPECT_EQ(format_fit_reports(fit.reports).find("msm_a (items within 10 %: a constant) (4 span(s) that waited for "
                                                   "another worker's pageable copy left out") != std::string::npos,
              pageable);
  }
}

// A trace's path may hold a line break; the comment that names it must still be one line.
TEST(Calibration, APathWithALineBreakStaysInsideTheComment) {
  CalibrationFit fit;
  fit.assemble_s = 0.002;
  const std::string text = calibration_toml(fit, "fitted from /tmp/a\n[h2d.pinned]\nx = 1\r/trace.csv");
  const toml::table table = toml::parse(text);
  EXPECT_FALSE(table.contains("h2d")) << text;
  EXPECT_EQ(table["cpu"]["assemble_s"].value<double>(), 0.002) << text;
}

TEST(Compare, ReportsPointsForUtilizationAndPercentForTheRest) {
  trace::TraceSummary measured, simulated;
  measured.gpu_utilization = 0.80;
  simulated.gpu_utilization = 0.75;
  measured.partitions_per_s = 2.0;
  simulated.partitions_per_s = 2.2;
  const auto errors = compare_summaries(measured, simulated);
  auto error_of = [&](const std::string& metric) {
    for (const MetricError& error : errors)
      if (error.metric == metric) return error;
    ADD_FAILURE() << "no metric " << metric;
    return MetricError{};
  };
  EXPECT_NEAR(error_of("gpu_utilization").error, -5.0, 1e-9);
  EXPECT_EQ(error_of("gpu_utilization").error_unit, "points");
  EXPECT_NEAR(error_of("partitions_per_s").error, 10.0, 1e-9);
  EXPECT_NE(format_comparison(errors).find("partitions_per_s"), std::string::npos);
}

}  // namespace
}  // namespace zkpipe::model
