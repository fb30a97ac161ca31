// Contract: a soak run of the property suite: as many generated cases as asked, split into
// chunks (one property, one seed, a number of cases), each chunk in its own forked process, at
// most `jobs` at a time (model properties fork again, one child per simulation). The report
// counts cases, faults injected (by the policy harness, the model and the engine's fake device,
// all from faults::FaultInjector but the harness's own events) and violations; each violation carries the property, the
// chunk's seed and RapidCheck's reproduce string, which replays it in zkpipe_property_tests:
//   RC_PARAMS="reproduce=<string>" zkpipe_property_tests --gtest_filter=<Suite>.<Name>
// Deterministic: the same options run the same cases.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "faults/fault_injector.hpp"

namespace zkpipe::properties {

struct SoakOptions {
  std::uint64_t policy_cases = 100'000;  // spread over the policy properties
  std::uint64_t pipeline_cases = 10'000;  // spread over the pipeline properties (logical time)
  std::uint64_t model_cases = 1'000;     // spread over the model properties (each simulates)
  std::uint64_t engine_cases = 0;        // spread over the engine properties (each proves a job)
  std::uint64_t seed = 1;
  std::size_t jobs = 1;
  std::vector<std::string> property_ids;  // empty: every property of the suite
};

struct SoakViolation {
  std::string property_id;
  std::uint64_t seed = 0;
  std::string reproduce;
  std::string failure;
};

struct SoakReport {
  std::uint64_t cases = 0;  // cases run, failing ones included
  std::map<std::string, std::uint64_t> cases_by_property;
  std::map<std::string, faults::FaultCounts> faults_by_property;
  faults::FaultCounts faults_injected;  // over every property
  std::vector<SoakViolation> violations;
};

using SoakProgress = std::function<void(std::size_t chunks_done, std::size_t chunks)>;
SoakReport run_soak(const SoakOptions& options, const SoakProgress& progress = {});
std::string format_soak_report(const SoakReport& report);

}  // namespace zkpipe::properties
