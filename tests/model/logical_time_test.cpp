// Tests of the model's two runtimes: the one pipeline with the scenario's costs on SimGrid and on
// logical time gives the same timeline wherever nothing contends, faults and scheduled deaths
// included (timeline_match.hpp says what "the same" leaves out: the order of actors acting at one
// instant); where synthesis threads slow each other the logical timeline is an approximation,
// measured here; and logical time runs in-process, any number of times, the same.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "scenario.hpp"
#include "simulation.hpp"
#include "test_support.hpp"
#include "timeline_match.hpp"
#include "trace/summary.hpp"
#include "trace/trace_csv.hpp"

namespace zkpipe::model {
namespace {

Scenario uncontended(std::vector<std::pair<std::string, std::string>> settings) {
  Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  for (const auto& [key, value] : settings) scenario = with_setting(scenario, key, value);
  return testing::uncontended(scenario);
}

TEST(LogicalTime, GivesSimGridsTimelineWhereNothingContends) {
  const std::vector<std::vector<std::pair<std::string, std::string>>> variants = {
      {},
      {{"policy.staging", "\"pageable\""}},
      {{"policy.pool_slabs", "1"}, {"policy.workers_per_gpu", "1"}},
      {{"hardware.gpus", "2"}, {"policy.pool_layout", "\"per-gpu\""}},
      {{"faults.gpu_error_probability", "0.3"}, {"faults.slow_transfer_probability", "0.2"},
       {"faults.stalled_transfer_probability", "0.1"}, {"faults.stalled_transfer_s", "0.05"}},
      {{"hardware.gpus", "2"}, {"faults.worker_death_probability", "0.1"}, {"faults.worker_death_s", "[0.3, 0.9]"}},
      {{"faults.pinned_allocation_fails", "true"}},
      {{"policy.srs_residency", "\"pinned-host\""}, {"workload.stream_chunk_points", "300000"}},
  };
  for (const auto& settings : variants) {
    const Scenario scenario = uncontended(settings);
    SCOPED_TRACE(fmt::format("{} settings changed, first: {}", settings.size(),
                             settings.empty() ? "none" : settings.front().first));
    const auto difference = testing::timeline_difference(simulate(scenario), simulate_in_logical_time(scenario));
    EXPECT_FALSE(difference) << *difference;
  }
}

TEST(LogicalTime, ApproximatesSimGridWhereSynthesisThreadsSlowEachOther) {
  const Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  const double simgrid_s = trace::summarize(simulate(scenario).spans).makespan_s;
  const double logical_s = trace::summarize(simulate_in_logical_time(scenario).spans).makespan_s;
  RecordProperty("makespan_ratio", fmt::format("{:.4f}", logical_s / simgrid_s));
  EXPECT_NEAR(logical_s / simgrid_s, 1.0, 0.05) << "SimGrid " << simgrid_s << " s, logical " << logical_s << " s";
}

TEST(LogicalTime, RunsInThisProcessAsOftenAsAskedAndAlwaysTheSame) {
  const Scenario scenario = uncontended({{"faults.gpu_error_probability", "0.3"}});
  const std::string first = trace::to_csv(simulate_in_logical_time(scenario).spans);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(trace::to_csv(simulate_in_logical_time(scenario).spans), first);
  EXPECT_NE(trace::to_csv(simulate_in_logical_time(with_setting(scenario, "seed", "8")).spans), first);
}

}  // namespace
}  // namespace zkpipe::model
