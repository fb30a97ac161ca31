// Tests of the soak run: exactly the cases asked, spread over the chosen properties, run in
// parallel processes, faults counted, the same counts for the same seed.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "property_suite.hpp"
#include "soak.hpp"

namespace zkpipe::properties {
namespace {

TEST(Soak, RunsExactlyTheCasesAskedInParallelProcessesAndCountsFaults) {
  SoakOptions options;
  options.policy_cases = 2500;  // three chunks of the one policy property chosen
  options.model_cases = 30;     // two chunks
  options.seed = 11;
  options.jobs = 2;
  options.property_ids = {"PolicyProperties/NoDeadlock", "ModelProperties/SimulatedTracesKeepThePipelineInvariants"};
  std::size_t progress_calls = 0;
  const SoakReport report = run_soak(options, [&](std::size_t, std::size_t) { ++progress_calls; });
  EXPECT_EQ(report.cases, 2530u);
  EXPECT_EQ(report.cases_by_property.at("PolicyProperties/NoDeadlock"), 2500u);
  EXPECT_EQ(report.cases_by_property.at("ModelProperties/SimulatedTracesKeepThePipelineInvariants"), 30u);
  EXPECT_EQ(progress_calls, 5u);
  EXPECT_TRUE(report.violations.empty()) << format_soak_report(report);
  EXPECT_GT(report.faults_injected.gpu_errors, 0u);
  EXPECT_GT(report.faults_injected.worker_deaths, 0u);
  EXPECT_GT(report.faults_injected.stalled_transfers, 0u);
  EXPECT_EQ(run_soak(options).faults_injected, report.faults_injected) << "the same seed should replay the same cases";
  EXPECT_NE(format_soak_report(report).find("violations 0"), std::string::npos);
}

// Engine cases draw their faults from the same injector as the model: soak counts them too.
TEST(Soak, CountsTheFaultsInjectedInEngineRuns) {
  const std::string engine_property = "EngineProperties/MeasuredTracesKeepThePipelineInvariants";
  if (std::ranges::none_of(all_properties(), [&](const NamedProperty& p) { return p.id == engine_property; }))
    GTEST_SKIP() << "the suite is built without the engine (engine/pipeline)";
  SoakOptions options;
  options.policy_cases = 0;
  options.pipeline_cases = 0;
  options.model_cases = 0;
  options.engine_cases = 6;  // two chunks
  options.seed = 21;
  options.jobs = 2;
  options.property_ids = {engine_property};
  const SoakReport report = run_soak(options);
  EXPECT_EQ(report.cases, 6u);
  EXPECT_TRUE(report.violations.empty()) << format_soak_report(report);
  EXPECT_GT(report.faults_injected.total(), 0u) << format_soak_report(report);
  EXPECT_EQ(report.faults_by_property.at(engine_property), report.faults_injected);
  EXPECT_NE(format_soak_report(report).find(fmt::format("faults injected {} ", report.faults_injected.total())),
            std::string::npos);
}

TEST(Soak, RefusesAnUnknownPropertyByName) {
  SoakOptions options;
  options.property_ids = {"PolicyProperties/NoSuchThing"};
  EXPECT_THROW(run_soak(options), std::invalid_argument);
}

}  // namespace
}  // namespace zkpipe::properties
