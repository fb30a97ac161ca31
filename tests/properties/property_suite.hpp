// Contract: zkpipe's property suite, shared by the GoogleTest binary in this folder and by
// `zkpipe soak`. Each NamedProperty is a RapidCheck property body with the id of its GoogleTest
// ("Suite/Name"), so the reproduce string either prints replays in both:
//   RC_PARAMS="reproduce=<string>" zkpipe_property_tests --gtest_filter=Suite.Name
// - PolicyProperties/*: stateful (rc::state) runs of the scheduling policy through the
//   PolicyHarness: random settings, random interleavings of events and faults; one property per
//   named invariant. Cheap: thousands of cases per second.
// - PipelineProperties/*: random faulty scenarios run through the one pipeline in logical time
//   (model::simulate_in_logical_time), in this process: the trace invariants. Cheap.
// - ModelProperties/*: random faulty scenarios simulated by the model, one simulation per forked
//   child process (SimGrid allows one engine per process); the trace invariants and what users
//   rely on (utilization, a makespan bound, pinned vs pageable, more PCIe bandwidth). Costly.
// - EngineProperties/*: where the suite is built with the engine (ZKPIPE_PROPERTIES_WITH_ENGINE),
//   whole jobs on the fake device backend, their measured traces through the same checker.
// run_property reports the faults its cases injected. Not thread-safe: one property runs at a
// time in a process.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "faults/fault_injector.hpp"
#include "policy_harness.hpp"
#include "scenario.hpp"

namespace zkpipe::properties {

// What a case costs: policy cases well under a millisecond, pipeline cases a model simulation in
// logical time in this process (about a millisecond), model cases one or two SimGrid simulations in
// child processes, engine cases a whole job proved on the CPU (about a second).
enum class PropertyKind { policy, pipeline, model, engine };

struct NamedProperty {
  std::string id;  // "PolicyProperties/LeasesWithinPool"
  PropertyKind kind;
  std::function<void()> body;
};
const std::vector<NamedProperty>& all_properties();
const NamedProperty& property_by_id(const std::string& id);  // throws naming the known ids

// The policy property `property` over the real policy (Policy = policy::SchedulingPolicy) or a
// test double: random settings, a random rc::state command sequence, then the harness's checks.
template <typename Policy>
void check_policy_property(PolicyProperty property);

// A random scenario in the model's small regime: what a model property varies. Built into a
// Scenario on the calibrated costs of a small 2^16..2^20-constraint workload.
struct ScenarioChoice {
  std::uint64_t seed = 1;
  std::uint32_t partitions = 4;
  std::uint32_t lg_constraints = 18;
  std::uint32_t synthesis_threads = 2;
  std::uint32_t partitions_in_flight = 2;
  policy::Staging staging = policy::Staging::pinned;
  std::uint32_t pool_slabs = 2;  // per pool
  policy::PoolLayout pool_layout = policy::PoolLayout::per_host;
  std::uint32_t budget_partitions = 2;  // the host budget, in partitions' a/b/c bytes
  std::uint32_t gpus = 1;
  std::uint32_t workers_per_gpu = 1;
  std::uint32_t copy_engines = 1;
  double pcie_h2d_gbps = 32;
  std::uint32_t retry_limit = 2;
  double gpu_error_probability = 0;
  double slow_transfer_probability = 0;
  double stalled_transfer_probability = 0;
  double worker_death_probability = 0;
  std::vector<double> worker_death_s{};  // scheduled deaths, worker i at the i-th time
  bool pinned_allocation_fails = false;
  // The key's points streamed from pinned host memory into the MSMs in chunks of this many points
  // (srs_residency pinned-host); 0: the key on the device.
  std::uint64_t stream_chunk_points = 0;
  // Logical time only: the order of actors acting at one instant, drawn from this seed (0: FIFO).
  std::uint64_t tie_seed = 0;

  model::Scenario build() const;
};
void showValue(const ScenarioChoice& choice, std::ostream& os);

// The figure the comparative model properties compare: the makespan of a simulated scenario.
double simulated_makespan_s(const model::Scenario& scenario);

// The most recent failing case of a policy property in this process. RapidCheck adopts each
// failing shrink in turn, so after a failed check this is the shrunk counterexample.
struct PolicyFailure {
  HarnessSettings settings;
  std::uint32_t commands = 0;  // rc::state commands run before the final drain
  std::string detail;
};
PolicyFailure& last_policy_failure();

// One run of a property outside GoogleTest (soak): `cases` cases from `seed`.
struct PropertyRun {
  int cases_passed = 0;
  bool failed = false;
  std::string failure;    // RapidCheck's description and shrunk counterexample
  std::string reproduce;  // for RC_PARAMS="reproduce=..."
  faults::FaultCounts faults_injected;  // by this run's cases, shrinking included
};
PropertyRun run_property(const NamedProperty& property, std::uint64_t seed, int cases);

// Adds the faults a case injected to this process's tally, which run_property reports (the
// policy and model properties count theirs here; the engine property calls it).
void count_injected_faults(const faults::FaultCounts& counts);

}  // namespace zkpipe::properties
