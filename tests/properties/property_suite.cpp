#include "property_suite.hpp"

#include <algorithm>
#include <sstream>
#include <unordered_map>
#include <stdexcept>

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#ifdef ZKPIPE_PROPERTIES_WITH_ENGINE
#include "engine_properties.hpp"
#endif
#include "leaky_lease_policy.hpp"
#include "policy_events.hpp"
#include "simulation.hpp"
#include "trace/invariants.hpp"
#include "trace/summary.hpp"
#include "tests/model/small_costs.hpp"

// Defined in librapidcheck (the text after RC_PARAMS="reproduce="), not declared in its headers.
namespace rc::detail {
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& reproduceMap);
}  // namespace rc::detail

namespace zkpipe::properties {

namespace {

// Faults injected by the cases run in this process so far (run_property reports its share).
faults::FaultCounts& tally() {
  static faults::FaultCounts counts;
  return counts;
}

// --- the model -------------------------------------------------------------------------------

// The model tests' small-workload costs (tests/model/small_costs.hpp) on an 8-core host.
const model::Scenario& base_scenario() {
  static const model::Scenario base =
      model::parse_scenario_text(std::string("name = \"property\"\n[hardware]\ncores = 8\nh2d_chunk_mib = 8\n") +
                                     model::testing::small_costs_toml,
                                 "property-base.toml", ".")
          .base;
  return base;
}

rc::Gen<ScenarioChoice> arbitrary_scenario_choice(bool with_faults) {
  return rc::gen::exec([with_faults] {
    ScenarioChoice choice;
    choice.seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    choice.partitions = *rc::gen::inRange<std::uint32_t>(1, 13);
    choice.lg_constraints = *rc::gen::inRange<std::uint32_t>(16, 21);
    choice.synthesis_threads = *rc::gen::inRange<std::uint32_t>(1, 9);
    choice.partitions_in_flight = *rc::gen::inRange<std::uint32_t>(1, 9);
    choice.staging = *rc::gen::element(policy::Staging::pinned, policy::Staging::pageable);
    choice.pool_slabs = *rc::gen::inRange<std::uint32_t>(1, 9);
    choice.budget_partitions = *rc::gen::inRange<std::uint32_t>(1, 9);
    choice.gpus = *rc::gen::inRange<std::uint32_t>(1, 9);
    choice.workers_per_gpu = *rc::gen::inRange<std::uint32_t>(1, 4);
    choice.copy_engines = *rc::gen::inRange<std::uint32_t>(1, 3);
    choice.pcie_h2d_gbps = double(*rc::gen::inRange<std::uint32_t>(4, 65));
    choice.retry_limit = *rc::gen::inRange<std::uint32_t>(0, 4);
    choice.pool_layout = *rc::gen::element(policy::PoolLayout::per_host, policy::PoolLayout::per_gpu);
    choice.stream_chunk_points = *rc::gen::element<std::uint64_t>(0, 0, 1 << 14, 1 << 18);
    choice.tie_seed = *rc::gen::weightedElement<bool>({{1, false}, {3, true}}) ? *rc::gen::inRange<std::uint64_t>(1, 1'000'000) : 0;
    if (with_faults) {
      choice.gpu_error_probability = *rc::gen::inRange<std::uint32_t>(0, 41) / 100.0;
      choice.slow_transfer_probability = *rc::gen::inRange<std::uint32_t>(0, 31) / 100.0;
      choice.stalled_transfer_probability = *rc::gen::inRange<std::uint32_t>(0, 21) / 100.0;
      choice.worker_death_probability = *rc::gen::inRange<std::uint32_t>(0, 11) / 100.0;
      choice.pinned_allocation_fails = *rc::gen::weightedElement<bool>({{9, false}, {1, true}});
      // Scheduled deaths within the first ~0.3 simulated seconds, where these jobs run.
      choice.worker_death_s = *rc::gen::container<std::vector<double>>(
          *rc::gen::inRange<std::size_t>(0, 3), rc::gen::map(rc::gen::inRange(0, 300), [](int ms) { return ms / 1000.0; }));
    }
    return choice;
  });
}

model::SimulationResult simulate_and_tally(const model::Scenario& scenario) {
  model::SimulationResult result = model::simulate(scenario);
  tally() += result.faults_injected;
  return result;
}

void simulated_traces_keep_the_pipeline_invariants() {
  const ScenarioChoice choice = *arbitrary_scenario_choice(true);
  const model::Scenario scenario = choice.build();
  const model::SimulationResult result = simulate_and_tally(scenario);
  const auto violations = trace::check_invariants(result.spans, model::trace_expectations(scenario, result));
  if (!violations.empty()) RC_FAIL("simulated trace breaks invariants:\n" + trace::format_violations(violations));
}

void utilization_within_zero_and_one() {
  const model::Scenario scenario = (*arbitrary_scenario_choice(true)).build();
  const trace::TraceSummary summary = trace::summarize(simulate_and_tally(scenario).spans);
  RC_ASSERT(summary.gpu_utilization >= 0.0);
  RC_ASSERT(summary.gpu_utilization <= 1.0 + 1e-9);
  for (const auto& [gpu, utilization] : summary.gpu_utilization_by_gpu) {
    RC_ASSERT(utilization >= 0.0);
    RC_ASSERT(utilization <= 1.0 + 1e-9);
  }
}

void makespan_at_least_gpu_work_per_gpu() {
  const model::Scenario scenario = (*arbitrary_scenario_choice(true)).build();
  const model::SimulationResult result = simulate_and_tally(scenario);
  double gpu_work_s = 0;
  for (const trace::Span& span : result.spans)
    if (trace::is_gpu_compute(span.phase)) gpu_work_s += span.duration_s();
  const double makespan_s = trace::summarize(result.spans).makespan_s;
  RC_ASSERT(makespan_s >= gpu_work_s / scenario.hardware.gpus - 1e-9);
}

// The model's pipeline in logical time, in this process: the same invariants as the SimGrid
// traces, at a fraction of a millisecond a case, so many more cases; three cases in four with the
// actors that act at one instant in an order drawn from the case's tie seed.
void logical_time_traces_keep_the_pipeline_invariants() {
  const ScenarioChoice choice = *arbitrary_scenario_choice(true);
  const model::Scenario scenario = choice.build();
  const model::SimulationResult result = model::simulate_in_logical_time(scenario, choice.tie_seed);
  tally() += result.faults_injected;
  const auto violations = trace::check_invariants(result.spans, model::trace_expectations(scenario, result));
  if (!violations.empty()) RC_FAIL("logical-time trace breaks invariants:\n" + trace::format_violations(violations));
}

// The comparative properties change one knob and nothing else: no faults, and one worker per
// GPU. With faults, a change that speeds every copy up can still lengthen the job (regression
// FasterCopiesLengthenedAJobWithStalledCopies); with several workers per GPU, faster copies
// change which partitions two workers of one GPU hold at once, and pinned staging can still come
// out a few percent slower (soak, seed 77: 0.520 against 0.502 s), though a ready partition goes
// to the least busy GPU (regression ReadyPartitionsGoToTheLeastBusyGpu).
ScenarioChoice comparable_choice() {
  ScenarioChoice choice = *arbitrary_scenario_choice(false);
  choice.workers_per_gpu = 1;
  return choice;
}

// Pinned staging adds one constraint pageable staging lacks, the pool: a pool smaller than the
// in-flight limit serializes synthesis behind copies (regression
// PinnedStagingWithAPoolSmallerThanTheInFlightLimitIsSlowerThanPageable), so the pool here is
// at least the in-flight limit, where it never binds and only the copy path differs; and it is
// one pool per host, since per-GPU pools bind each partition to a GPU when it is admitted, where
// pageable partitions go to a waiting worker when they are ready (regression
// PerGpuPoolsBindAtAdmissionAndCanBeSlowerThanPageable).
void pinned_never_slower_than_pageable() {
  ScenarioChoice choice = comparable_choice();
  choice.pool_slabs = std::max(choice.pool_slabs, choice.partitions_in_flight);
  choice.pool_layout = policy::PoolLayout::per_host;
  choice.staging = policy::Staging::pinned;
  const double pinned_s = simulated_makespan_s(choice.build());
  choice.staging = policy::Staging::pageable;
  const double pageable_s = simulated_makespan_s(choice.build());
  RC_LOG() << "pinned " << pinned_s << " s, pageable " << pageable_s << " s\n";
  RC_ASSERT(pinned_s <= pageable_s * (1 + 1e-9));
}

void more_pcie_bandwidth_never_slower() {
  ScenarioChoice choice = comparable_choice();
  const double faster_gbps = choice.pcie_h2d_gbps * (1 + *rc::gen::inRange<std::uint32_t>(1, 8));
  const double slower_s = simulated_makespan_s(choice.build());
  choice.pcie_h2d_gbps = faster_gbps;
  const double faster_s = simulated_makespan_s(choice.build());
  RC_LOG() << "at " << faster_gbps << " GB/s " << faster_s << " s, slower link " << slower_s << " s\n";
  RC_ASSERT(faster_s <= slower_s * (1 + 1e-9));
}

// Soak reports failures itself: RapidCheck's own listeners (the reproduce line printed at exit)
// stay out of it.
class SilentListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

template <typename Property>
NamedProperty policy_entry(const char* id, Property property) {
  return {id, PropertyKind::policy, [property] { check_policy_property<policy::SchedulingPolicy>(property); }};
}

}  // namespace

template <typename Policy>
void check_policy_property(PolicyProperty property) {
  const HarnessSettings settings = *arbitrary_harness_settings();
  PolicyHarness<Policy> harness(settings);
  rc::state::check(settings, harness, &arbitrary_event<Policy>);
  const std::uint32_t commands = harness.events_applied();
  harness.finish();
  tally() += harness.faults_injected();
  RC_TAG(harness.faults_injected().total() > 0 ? "with faults" : "fault-free");
  if (const auto violation = harness.first_violation(property)) {
    last_policy_failure() = {settings, commands, violation->detail};
    RC_FAIL(std::string(property_name(property)) + " violated " + violation->detail);
  }
}
template void check_policy_property<policy::SchedulingPolicy>(PolicyProperty);
template void check_policy_property<LeakyLeasePolicy>(PolicyProperty);

model::Scenario ScenarioChoice::build() const {
  model::Scenario scenario = base_scenario();
  scenario.seed = seed;
  scenario.workload.partitions = partitions;
  scenario.workload.constraints_per_partition = 1ull << lg_constraints;
  scenario.hardware.gpus = gpus;
  scenario.hardware.copy_engines_h2d = copy_engines;
  scenario.hardware.pcie_h2d_gbps = pcie_h2d_gbps;
  scenario.policy.synthesis_threads = synthesis_threads;
  scenario.policy.partitions_in_flight = partitions_in_flight;
  scenario.policy.staging = staging;
  scenario.policy.pool_slabs = pool_slabs;
  scenario.policy.pool_layout = pool_layout;
  scenario.policy.host_budget_bytes = scenario.workload.partition_abc_bytes() * budget_partitions;
  scenario.policy.workers_per_gpu = workers_per_gpu;
  scenario.policy.retry_limit = retry_limit;
  if (stream_chunk_points > 0) {
    scenario.policy.srs_residency = policy::SrsResidency::pinned_host;
    scenario.workload.stream_chunk_points = stream_chunk_points;
  }
  scenario.faults.gpu_error_probability = gpu_error_probability;
  scenario.faults.slow_transfer_probability = slow_transfer_probability;
  scenario.faults.stalled_transfer_probability = stalled_transfer_probability;
  scenario.faults.stalled_transfer_s = 0.05;
  scenario.faults.worker_death_probability = worker_death_probability;
  scenario.faults.worker_death_s = worker_death_s;
  scenario.faults.pinned_allocation_fails = pinned_allocation_fails;
  policy::validate(scenario.policy_settings());
  faults::validate(scenario.fault_options());
  return scenario;
}

void showValue(const ScenarioChoice& c, std::ostream& os) {
  os << "seed " << c.seed << ", partitions " << c.partitions << ", lg_constraints " << c.lg_constraints
     << ", synthesis_threads " << c.synthesis_threads << ", in_flight " << c.partitions_in_flight << ", staging "
     << policy::staging_name(c.staging) << ", pool_slabs " << c.pool_slabs << ", pool_layout "
     << policy::pool_layout_name(c.pool_layout) << ", budget_partitions "
     << c.budget_partitions << ", gpus " << c.gpus << ", workers_per_gpu " << c.workers_per_gpu << ", copy_engines "
     << c.copy_engines << ", pcie_h2d_gbps " << c.pcie_h2d_gbps << ", retry_limit " << c.retry_limit
     << ", gpu_error_probability " << c.gpu_error_probability << ", slow_transfer_probability "
     << c.slow_transfer_probability << ", stalled_transfer_probability " << c.stalled_transfer_probability
     << ", worker_death_probability " << c.worker_death_probability << ", worker_death_s [";
  for (std::size_t i = 0; i < c.worker_death_s.size(); ++i) os << (i ? ", " : "") << c.worker_death_s[i];
  os << "], pinned_allocation_fails " << c.pinned_allocation_fails << ", stream_chunk_points " << c.stream_chunk_points
     << ", tie_seed " << c.tie_seed;
}

double simulated_makespan_s(const model::Scenario& scenario) {
  return trace::summarize(simulate_and_tally(scenario).spans).makespan_s;
}

void count_injected_faults(const faults::FaultCounts& counts) { tally() += counts; }

PolicyFailure& last_policy_failure() {
  static PolicyFailure failure;
  return failure;
}

const std::vector<NamedProperty>& all_properties() {
  static const std::vector<NamedProperty> properties = {
      policy_entry("PolicyProperties/LeasesWithinPool", PolicyProperty::leases_within_pool),
      policy_entry("PolicyProperties/ReservedWithinBudget", PolicyProperty::reserved_within_budget),
      policy_entry("PolicyProperties/EveryPartitionEndsExactlyOnce", PolicyProperty::ends_exactly_once),
      policy_entry("PolicyProperties/PhasesInOrder", PolicyProperty::phases_in_order),
      policy_entry("PolicyProperties/NoDeadlock", PolicyProperty::no_deadlock),
      policy_entry("PolicyProperties/GpuComputeSectionsNeverOverlap", PolicyProperty::gpu_compute_exclusive),
      policy_entry("PolicyProperties/BoundPartitionsRunOnlyOnTheirGpu", PolicyProperty::runs_on_bound_gpu),
      {"ModelProperties/SimulatedTracesKeepThePipelineInvariants", PropertyKind::model,
       simulated_traces_keep_the_pipeline_invariants},
      {"ModelProperties/UtilizationWithinZeroAndOne", PropertyKind::model, utilization_within_zero_and_one},
      {"ModelProperties/MakespanAtLeastGpuWorkPerGpu", PropertyKind::model, makespan_at_least_gpu_work_per_gpu},
      {"ModelProperties/PinnedNeverSlowerThanPageable", PropertyKind::model, pinned_never_slower_than_pageable},
      {"ModelProperties/MorePcieBandwidthNeverSlower", PropertyKind::model, more_pcie_bandwidth_never_slower},
      {"PipelineProperties/LogicalTimeTracesKeepThePipelineInvariants", PropertyKind::pipeline,
       logical_time_traces_keep_the_pipeline_invariants},
#ifdef ZKPIPE_PROPERTIES_WITH_ENGINE
      {"EngineProperties/MeasuredTracesKeepThePipelineInvariants", PropertyKind::engine,
       measured_traces_keep_the_pipeline_invariants},
#endif
  };
  return properties;
}

const NamedProperty& property_by_id(const std::string& id) {
  std::string known;
  for (const NamedProperty& property : all_properties()) {
    if (property.id == id) return property;
    known += " " + property.id;
  }
  throw std::invalid_argument("no property " + id + "; known:" + known);
}

PropertyRun run_property(const NamedProperty& property, std::uint64_t seed, int cases) {
  rc::detail::TestMetadata metadata;
  metadata.id = property.id;
  metadata.description = property.id;
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = cases;
  SilentListener listener;
  const faults::FaultCounts before = tally();
  const rc::detail::TestResult result = rc::detail::checkTestable(property.body, metadata, params, listener);
  const faults::FaultCounts after = tally();
  PropertyRun run;
  run.faults_injected = {after.gpu_errors - before.gpu_errors,
                         after.pinned_allocation_failures - before.pinned_allocation_failures,
                         after.slow_transfers - before.slow_transfers, after.stalled_transfers - before.stalled_transfers,
                         after.worker_deaths - before.worker_deaths, after.wrong_results - before.wrong_results,
                         after.device_allocation_failures - before.device_allocation_failures,
                         after.device_resets - before.device_resets};
  if (result.template is<rc::detail::SuccessResult>()) {
    run.cases_passed = result.template get<rc::detail::SuccessResult>().numSuccess;
    return run;
  }
  run.failed = true;
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  run.failure = message.str();
  if (result.template is<rc::detail::FailureResult>()) {
    const auto& failure = result.template get<rc::detail::FailureResult>();
    run.cases_passed = failure.numSuccess;
    run.reproduce = rc::detail::reproduceMapToString({{property.id, failure.reproduce}});
  }
  return run;
}

}  // namespace zkpipe::properties
