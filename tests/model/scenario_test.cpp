// Tests of scenario loading: strictness (unknown keys, ranges, types name file, line and key),
// calibration includes, sweeps and settings.
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/pipeline/settings.hpp"
#include "scenario.hpp"
#include "test_support.hpp"

namespace zkpipe::model {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_scenario_text(text, "scenario.toml", ".");
  } catch (const ScenarioError& error) {
    return error.what();
  }
  return "";
}

TEST(Scenario, ReadsTheSmallScenario) {
  const Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  EXPECT_EQ(scenario.name, "small");
  EXPECT_EQ(scenario.seed, 7u);
  EXPECT_EQ(scenario.workload.partitions, 12u);
  EXPECT_EQ(scenario.policy.pool_slabs, 3u);
  EXPECT_DOUBLE_EQ(scenario.hardware.pcie_h2d_gbps, 55.3);
  EXPECT_EQ(scenario.calibration.gpu_phase_cost.size(), 3u);
}

TEST(Scenario, AnUnknownKeyNamesFileLineAndKey) {
  std::string text = testing::small_scenario_text();
  text.replace(text.find("[policy]\n"), 9, "[policy]\npool_slab = 4\n");
  const std::string error = error_of(text);
  EXPECT_NE(error.find("scenario.toml:16"), std::string::npos) << error;
  EXPECT_NE(error.find("policy.pool_slab"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown key"), std::string::npos) << error;
}

TEST(Scenario, AnOutOfRangeValueNamesFileLineAndKey) {
  std::string text = testing::small_scenario_text();
  text.replace(text.find("synthesis_threads = 4"), 21, "synthesis_threads = 5000");
  const std::string error = error_of(text);
  EXPECT_NE(error.find("scenario.toml:16"), std::string::npos) << error;
  EXPECT_NE(error.find("policy.synthesis_threads"), std::string::npos) << error;
  EXPECT_NE(error.find("out of range"), std::string::npos) << error;
}

TEST(Scenario, AWrongTypeAndAnImpossibleBudgetAreErrors) {
  std::string text = testing::small_scenario_text();
  text.replace(text.find("staging = \"pinned\""), 18, "staging = 3");
  EXPECT_NE(error_of(text).find("policy.staging"), std::string::npos);
  text = testing::small_scenario_text();
  text.replace(text.find("host_budget_gib = 4"), 19, "host_budget_gib = 0.01");
  EXPECT_NE(error_of(text).find("budget"), std::string::npos) << error_of(text);
}

TEST(Scenario, CoresFactorsNeedOneCoreCountEach) {
  std::string text = testing::small_scenario_text();
  text.insert(text.find("[synthesis]") + 12, "factor_cores = [2, 16]\ncores_factors = [0.9]\n");
  EXPECT_NE(error_of(text).find("1 factors for 2 factor_cores"), std::string::npos) << error_of(text);
  text = testing::small_scenario_text();
  text.insert(text.find("[synthesis]") + 12, "factor_cores = [2, 2]\ncores_factors = [0.9, 1.1]\n");
  EXPECT_NE(error_of(text).find("2 cores listed twice"), std::string::npos) << error_of(text);
}

// The engine's device-memory plan, on the footprint the engine measured at 2^24
// (scenarios/calibration/traces/devmem24-h200-20261201T2318): a 22.2 GiB budget runs one of the
// two workers beside the key, 17 GiB streams the key (its points copied into every MSM), 10 GiB
// holds no worker and is refused by name.
TEST(Scenario, TheDeviceBudgetFitsWorkersAndTheKeyAsTheEngineDoes) {
  auto with_budget = [](double gib) {
    std::string text = testing::small_scenario_text();
    text.replace(text.find("[workload]\n"), 11,
                 "[workload]\ndevice_key_mib = 9196\ndevice_shared_mib = 9491.6\ndevice_worker_mib = 2685\n"
                 "device_streaming_mib = 3330\n");
    text.replace(text.find("[policy]\n"), 9, fmt::format("[policy]\ndevice_budget_gib = {}\n", gib));
    return text;
  };
  const Scenario one_worker = parse_scenario_text(with_budget(22.2), "s.toml", ".").base;
  EXPECT_EQ(one_worker.policy.workers_per_gpu, 1u);
  EXPECT_EQ(one_worker.policy.srs_residency, SrsResidency::device);
  EXPECT_NE(one_worker.device_plan_change.find("1 of the 2 workers"), std::string::npos) << one_worker.device_plan_change;
  const Scenario streamed = parse_scenario_text(with_budget(17), "s.toml", ".").base;
  EXPECT_EQ(streamed.policy.workers_per_gpu, 1u);
  EXPECT_EQ(streamed.policy.srs_residency, SrsResidency::pinned_host);
  const std::string error = error_of(with_budget(10));
  EXPECT_NE(error.find("device_budget_gib"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot hold one worker"), std::string::npos) << error;
  EXPECT_TRUE(parse_scenario_text(with_budget(30), "s.toml", ".").base.device_plan_change.empty());
}

// One vocabulary: a scenario's [policy] keys left out are chosen as `zkpipe prove` chooses its
// options left out, from the same host and job, by the same code; and the budget holds the same
// key, workers' buffers and partitions.
TEST(Scenario, PolicyKeysLeftOutAreChosenAsTheEngineChoosesThem) {
  const std::string policy_lines = "synthesis_threads = 4\npartitions_in_flight = 4\nstaging = \"pinned\"\npool_slabs = 3\n"
                                   "host_budget_gib = 4\nworkers_per_gpu = 2\n";
  std::string text = testing::small_scenario_text();
  text.replace(text.find(policy_lines), policy_lines.size(), "");
  text.replace(text.find("[workload]\n"), 11,
               "[workload]\nhost_witness_mib = 40\nhost_key_mib = 3000\nhost_worker_mib = 220\n");
  text.replace(text.find("[hardware]\n"), 11, "[hardware]\nhost_memory_gib = 20\n");
  const Scenario scenario = parse_scenario_text(text, "s.toml", ".").base;

  zk::pipeline::Settings requested;
  requested.backend = "cuda";
  const zk::pipeline::JobSizes sizes{12, scenario.workload.partition_abc_bytes(), 40ull << 20, 3000ull << 20};
  const zk::pipeline::Settings engine = zk::pipeline::resolve_settings(requested, sizes, {8, 20ull << 30, 1});
  // The CUDA worker's buffers for this witness with pinned staging: what the scenario gave.
  ASSERT_EQ(zk::pipeline::worker_host_bytes(sizes, "cuda", policy::Staging::pinned) >> 20, 220u);
  EXPECT_EQ(nlohmann::json(static_cast<const policy::JobSettings&>(scenario.policy)),
            nlohmann::json(static_cast<const policy::JobSettings&>(engine)));
  EXPECT_EQ(scenario.policy.synthesis_threads, 4u);     // half the 8 cores
  EXPECT_EQ(scenario.policy.partitions_in_flight, 6u);  // and the 2 workers
  EXPECT_EQ(scenario.policy_settings().host_budget_bytes,
            scenario.policy.host_budget_bytes - (3000ull << 20) - 2 * (220ull << 20));
}

TEST(Scenario, ThePoolLayoutIsOnePoolPerHostUnlessToldPerGpu) {
  std::string text = testing::small_scenario_text();
  EXPECT_EQ(parse_scenario_text(text, "s.toml", ".").base.policy.pool_layout, policy::PoolLayout::per_host);
  text.replace(text.find("[policy]\n"), 9, "[policy]\npool_layout = \"per-gpu\"\n");
  const Scenario per_gpu = with_setting(parse_scenario_text(text, "s.toml", ".").base, "hardware.gpus", "3");
  EXPECT_EQ(per_gpu.policy.pool_layout, policy::PoolLayout::per_gpu);
  EXPECT_EQ(per_gpu.policy_settings().pools(), 3u);
  text.replace(text.find("\"per-gpu\""), 9, "\"per-numa\"");
  const std::string error = error_of(text);
  EXPECT_NE(error.find("scenario.toml:16"), std::string::npos) << error;
  EXPECT_NE(error.find("policy.pool_layout"), std::string::npos) << error;
  EXPECT_NE(error.find("\"per-host\", \"per-gpu\""), std::string::npos) << error;
}

TEST(Scenario, ANameThatWouldBreakTheTraceCsvIsAnError) {
  std::string text = testing::small_scenario_text();
  text.replace(text.find("name = \"small\""), 14, "name = \"a,b\"");
  EXPECT_NE(error_of(text).find("scenario.toml:1: name"), std::string::npos) << error_of(text);
}

TEST(Scenario, AMissingCostAsksForACalibration) {
  std::string text = testing::small_scenario_text();
  text.erase(text.find("[synthesis]"), text.find("[cpu]") - text.find("[synthesis]"));
  EXPECT_NE(error_of(text).find("synthesis.core_s_per_mconstraint"), std::string::npos) << error_of(text);
}

// tail_msm is supraseal's three tail MSMs in one (gpu_kernels.hpp): with msm_a beside it, A's
// tail would run twice.
TEST(Scenario, ATailMsmBesideTheTailsItHoldsIsAnError) {
  const std::string text = testing::small_scenario_text() + "[gpu_phase_cost.tail_msm]\nper_mitem_s = 0.01\n";
  EXPECT_NE(error_of(text).find("gpu_phase_cost.msm_a"), std::string::npos) << error_of(text);
  EXPECT_NE(error_of(text).find("not both"), std::string::npos) << error_of(text);
}

TEST(Scenario, IncludesACalibrationThatItsOwnKeysOverride) {
  testing::ScratchDirectory scratch;
  std::ofstream(scratch.path() / "cal.toml") << "[synthesis]\ncore_s_per_mconstraint = 9.0\nslowdown_per_extra_thread = 0.5\n";
  std::string text = testing::small_scenario_text();
  text.erase(text.find("[synthesis]"), text.find("[cpu]") - text.find("[synthesis]"));
  text = "calibration = \"cal.toml\"\n" + text + "\n[synthesis]\nslowdown_per_extra_thread = 0.25\n";
  const Scenario scenario = parse_scenario_text(text, "s.toml", scratch.path()).base;
  EXPECT_DOUBLE_EQ(scenario.calibration.synth_core_s_per_mconstraint, 9.0);
  EXPECT_DOUBLE_EQ(scenario.calibration.synth_slowdown_per_extra_thread, 0.25);
}

// Inputs of the scenario fuzzer that broke toml++ 3.3.0 built from its headers with sanitizers (a
// debug assertion; __builtin_unreachable on U+0423): the library zkpipe links answers a parse error.
TEST(Scenario, InputsThatTripTomlPlusPlusGiveAParseError) {
  for (const std::string text : {"[#policy]\n", "\xd0\xa3", "[[[1]]]\n"})
    EXPECT_NE(error_of(text).find("scenario.toml:1:"), std::string::npos) << error_of(text);
}

// A calibration include must be a file: a folder reads as nothing, /dev/zero never ends.
TEST(Scenario, ACalibrationThatIsNoFileIsAnError) {
  for (const std::string include : {".", "/dev/zero"}) {
    const std::string error = error_of("calibration = \"" + include + "\"\n" + testing::small_scenario_text());
    EXPECT_NE(error.find("calibration: cannot open"), std::string::npos) << error;
  }
}

TEST(Scenario, ASweepExpandsToTheCartesianProduct) {
  const std::string text = testing::small_scenario_text() +
                           "\n[sweep]\n\"policy.synthesis_threads\" = { from = 2, to = 6, step = 2 }\n"
                           "\"policy.pool_slabs\" = [1, 2]\n";
  const LoadedScenario loaded = parse_scenario_text(text, "s.toml", ".");
  ASSERT_EQ(loaded.sweep_points.size(), 6u);
  EXPECT_EQ(loaded.sweep_points[0].settings[0].first, "policy.pool_slabs");
  EXPECT_EQ(loaded.sweep_points[5].scenario.policy.synthesis_threads, 6u);
  EXPECT_EQ(loaded.sweep_points[5].scenario.policy.pool_slabs, 2u);
}

// A range of 10^24 values, one whose step vanishes beside its start (once an endless loop) and a
// product of lists past the limit are refused before they are expanded.
TEST(Scenario, ASweepBeyondTenThousandPointsIsRefusedBeforeExpanding) {
  for (const std::string sweep : {"\"seed\" = { from = 0, to = 1e12, step = 1e-12 }\n",
                                   "\"seed\" = { from = 1e11, to = 1.000001e11, step = 1e-12 }\n",
                                   "\"seed\" = { from = 1, to = 101 }\n\"policy.pool_slabs\" = { from = 1, to = 100 }\n"}) {
    const std::string error = error_of(testing::small_scenario_text() + "\n[sweep]\n" + sweep);
    EXPECT_NE(error.find("more than 10000"), std::string::npos) << error;
  }
  const std::string text = testing::small_scenario_text() + "\n[sweep]\n\"seed\" = { from = 1, to = 100 }\n"
                           "\"policy.retry_limit\" = { from = 1, to = 100 }\n";
  EXPECT_EQ(parse_scenario_text(text, "s.toml", ".").sweep_points.size(), 10'000u);
}

TEST(Scenario, ASweepOfAnUnknownKeyIsAnError) {
  const std::string text = testing::small_scenario_text() + "\n[sweep]\n\"policy.threads\" = [1, 2]\n";
  EXPECT_NE(error_of(text).find("policy.threads"), std::string::npos) << error_of(text);
}

TEST(Scenario, ASettingChangesOneKeyAndIsValidated) {
  std::string text = testing::small_scenario_text();
  text.erase(0, text.find('\n') + 1);  // no name: the scenario is named after its file
  const Scenario scenario = parse_scenario_text(text, "dir/s.toml", ".").base;
  EXPECT_EQ(scenario.name, "s");
  EXPECT_EQ(with_setting(scenario, "seed", "3").name, "s");
  EXPECT_EQ(with_setting(scenario, "policy.staging", "\"pageable\"").policy.staging, policy::Staging::pageable);
  EXPECT_THROW(with_setting(scenario, "policy.pool_slabs", "-1"), ScenarioError);
}

TEST(Scenario, ShippedScenariosLoad) {
  for (const auto& entry : std::filesystem::directory_iterator(testing::source_dir() / "scenarios"))
    if (entry.path().extension() == ".toml") {
      EXPECT_NO_THROW(load_scenario_file(entry.path())) << entry.path();
    }
}

}  // namespace
}  // namespace zkpipe::model
