// Contract: PolicyHarness drives a scheduling policy the way the engine and the model do
// (synthesis threads, GPU workers with one compute section per GPU, host-to-device copies),
// one event at a time, faults included, with logical time (one unit per event that happened).
// It checks the policy's promises after every event and, at the end, drains the job without
// faults and checks the logical trace it wrote with trace::check_invariants, the checker the
// model's and the engine's traces go through. Violations are collected, each under the named
// property it breaks; nothing is thrown, so callers decide how to fail.
//
// `Policy` is policy::SchedulingPolicy, or a test double with the same interface (the teeth
// test's LeakyLeasePolicy). Single-threaded; RapidCheck's rc::state commands call apply().
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "faults/fault_injector.hpp"
#include "policy/scheduling_policy.hpp"
#include "trace/invariants.hpp"
#include "trace/trace.hpp"

namespace zkpipe::properties {

struct HarnessSettings {
  policy::PolicySettings policy;
  std::uint32_t synthesis_threads = 1;
};
void showValue(const HarnessSettings& settings, std::ostream& os);  // RapidCheck prints counterexamples with it

// The named properties of the policy; each RapidCheck property asserts one of them.
enum class PolicyProperty {
  leases_within_pool,      // pinned leases <= slabs per pool, no slab held twice, every lease held by a live attempt
  reserved_within_budget,  // reserved bytes <= budget and == the bytes of attempts holding a/b/c
  ends_exactly_once,       // proved or failed once, never changed, none lost when the job ends
  phases_in_order,         // synth -> h2d -> compute -> assemble, attempt by attempt
  no_deadlock,             // while work remains, the next fault-free step makes progress, within a bound
  gpu_compute_exclusive,   // compute sections of one GPU never overlap
  runs_on_bound_gpu,       // per-GPU pools: a partition is copied and run only by the GPU whose slab it holds
};
std::string_view property_name(PolicyProperty property);

enum class EventKind {
  // what the pipeline does when nothing goes wrong
  start_synthesis, finish_synthesis, assign_gpu_work, finish_copy, begin_compute, finish_compute, watchdog_fires,
  // faults
  gpu_error, pinned_allocation_failure, slow_transfer, stalled_transfer, worker_dies,
};
std::string_view event_name(EventKind kind);

struct PolicyViolation {
  PolicyProperty property;
  std::string detail;
};

template <typename Policy>
class PolicyHarness {
 public:
  explicit PolicyHarness(const HarnessSettings& settings)
      : settings_(settings),
        policy_(settings.policy),
        thread_busy_(settings.synthesis_threads, false),
        worker_busy_(workers(), false),
        computing_(settings.policy.gpus),
        outcomes_(settings.policy.partitions, policy::PartitionOutcome::pending),
        granted_slab_(settings.policy.partitions) {}

  // Performs `kind` on the target `pick` selects (modulo what is possible now); returns whether
  // anything happened. Checks the step invariants afterwards.
  bool apply(EventKind kind, std::uint32_t pick) {
    ++events_applied_;
    clock_s_ += 1;  // the time of this event, if it happens
    const bool happened = perform(kind, pick);
    if (!happened) clock_s_ -= 1;
    check_step();
    return happened;
  }

  // Ends the run: drains the job without faults (checking that it makes progress within a
  // bound), then checks the logical trace. Call once, after the last apply().
  void finish() {
    drain();
    const auto& counters = policy_.counters();
    if (!policy_.finished())
      violate(PolicyProperty::ends_exactly_once,
              fmt::format("{} proved + {} failed of {} partitions when the job stopped", counters.proved,
                          counters.failed, settings_.policy.partitions));
    if (counters.slabs_leased != 0 || !policy_.slab_leases().empty())
      violate(PolicyProperty::leases_within_pool, fmt::format("{} slabs still leased after the job ended",
                                                              policy_.slab_leases().size()));
    if (counters.reserved_bytes != 0)
      violate(PolicyProperty::reserved_within_budget,
              fmt::format("{} bytes still reserved after the job ended", counters.reserved_bytes));
    trace::RunExpectations expected;
    expected.partitions = settings_.policy.partitions;
    expected.proved = counters.proved;
    expected.failed = counters.failed;
    expected.host_budget_bytes = settings_.policy.host_budget_bytes;
    expected.partitions_in_flight_max = settings_.policy.partitions_in_flight_max;
    if (settings_.policy.staging == policy::Staging::pinned && !pinned_allocation_failed_) {
      expected.pool_slabs = settings_.policy.pool_slabs;
      expected.pools = settings_.policy.pools();
    }
    for (const trace::Violation& violation : trace::check_invariants(spans_, expected))
      violate(property_of(violation.invariant), violation.detail);
  }

  std::optional<PolicyViolation> first_violation(PolicyProperty property) const {
    for (const PolicyViolation& violation : violations_)
      if (violation.property == property) return violation;
    return std::nullopt;
  }
  const std::vector<PolicyViolation>& violations() const { return violations_; }
  std::uint32_t events_applied() const { return events_applied_; }  // apply() calls, drain included
  const faults::FaultCounts& faults_injected() const { return faults_; }

 private:
  struct Synthesis {
    policy::PartitionId partition;
    std::uint32_t thread;
    double start_s;
  };
  struct Copy {
    policy::PartitionId partition;
    policy::WorkerId worker;
    double start_s;
    double done_at_s;  // a slow copy finishes no earlier than this
    bool stalled;
  };
  struct Compute {
    policy::PartitionId partition;
    policy::WorkerId worker;
    double start_s;
  };

  policy::WorkerId workers() const { return settings_.policy.gpus * settings_.policy.workers_per_gpu; }
  std::uint32_t gpu_of(policy::WorkerId worker) const { return worker / settings_.policy.workers_per_gpu; }
  bool per_gpu_pools() const { return settings_.policy.pool_layout == policy::PoolLayout::per_gpu; }
  std::string worker_resource(policy::WorkerId worker) const {
    return fmt::format("gpu{}:w{}", gpu_of(worker), worker % settings_.policy.workers_per_gpu);
  }

  void violate(PolicyProperty property, std::string detail) {
    violations_.push_back({property, fmt::format("at logical time {}: {}", clock_s_, detail)});
  }

  static PolicyProperty property_of(trace::Invariant invariant) {
    switch (invariant) {
      case trace::Invariant::phases_in_order: return PolicyProperty::phases_in_order;
      case trace::Invariant::ends_exactly_once: return PolicyProperty::ends_exactly_once;
      case trace::Invariant::gpu_compute_exclusive: return PolicyProperty::gpu_compute_exclusive;
      case trace::Invariant::holdings_within_limits: return PolicyProperty::reserved_within_budget;
    }
    return PolicyProperty::ends_exactly_once;
  }

  // A span from start_s to now (the event being performed).
  void record(policy::PartitionId partition, trace::Phase phase, std::string resource, double start_s,
              std::uint64_t bytes) {
    spans_.push_back({"policy-harness", trace::Source::simulated, partition, phase, std::move(resource), start_s,
                      clock_s_, bytes, 0});
  }

  template <typename Entry>
  static Entry take(std::vector<Entry>& entries, std::size_t index) {
    Entry entry = entries[index];
    entries.erase(entries.begin() + std::ptrdiff_t(index));
    return entry;
  }

  // The policy took synthesized partitions back (requeued, or ended): the harness drops them too.
  void drop_ready_taken_back() {
    std::erase_if(ready_, [&](policy::PartitionId id) { return !policy_.waiting_for_gpu(id); });
  }

  bool perform(EventKind kind, std::uint32_t pick) {
    switch (kind) {
      case EventKind::start_synthesis: return start_synthesis();
      case EventKind::finish_synthesis: return finish_synthesis(pick);
      case EventKind::assign_gpu_work: return assign_gpu_work(pick);
      case EventKind::finish_copy: return finish_copy(pick);
      case EventKind::begin_compute: return begin_compute(pick);
      case EventKind::finish_compute: return end_compute(pick, false);
      case EventKind::gpu_error: return end_compute(pick, true);
      case EventKind::watchdog_fires: return watchdog_fires(pick);
      case EventKind::pinned_allocation_failure: return pinned_allocation_fails();
      case EventKind::slow_transfer: return slow_or_stall_a_copy(pick, false);
      case EventKind::stalled_transfer: return slow_or_stall_a_copy(pick, true);
      case EventKind::worker_dies: return worker_dies(pick);
    }
    return false;
  }

  bool start_synthesis() {
    const auto thread = std::ranges::find(thread_busy_, false);
    if (thread == thread_busy_.end()) return false;
    const auto thread_index = std::uint32_t(thread - thread_busy_.begin());
    const policy::SynthesisDecision decision = policy_.request_synthesis();
    const auto* grant = std::get_if<policy::SynthesisGrant>(&decision);
    if (!grant) return false;
    thread_busy_[thread_index] = true;
    granted_slab_[grant->partition] = grant->backing.slab;
    if (per_gpu_pools() && grant->backing.slab &&
        grant->backing.gpu != settings_.policy.pool_of_slab(*grant->backing.slab))
      violate(PolicyProperty::runs_on_bound_gpu, fmt::format("partition {} holds slab {} but is bound to another GPU",
                                                             grant->partition, *grant->backing.slab));
    synthesizing_.push_back(Synthesis{grant->partition, thread_index, clock_s_});
    return true;
  }

  bool finish_synthesis(std::uint32_t pick) {
    if (synthesizing_.empty()) return false;
    const Synthesis synthesis = take(synthesizing_, pick % synthesizing_.size());
    thread_busy_[synthesis.thread] = false;
    policy_.synthesis_finished(synthesis.partition);
    record(synthesis.partition, trace::Phase::synth, fmt::format("cpu:{}", synthesis.thread), synthesis.start_s,
           settings_.policy.partition_host_bytes);
    if (policy_.waiting_for_gpu(synthesis.partition)) ready_.push_back(synthesis.partition);
    return true;
  }

  bool assign_gpu_work(std::uint32_t pick) {
    const policy::WorkerId worker = pick % workers();
    if (worker_busy_[worker] || !policy_.worker_alive(worker)) return false;
    const auto assignment = policy_.request_gpu_work(worker);
    if (!assignment) return false;
    std::erase(ready_, assignment->partition);
    const std::optional<policy::SlabId> slab = granted_slab_[assignment->partition];
    if (per_gpu_pools() && slab && settings_.policy.pool_of_slab(*slab) != gpu_of(worker))
      violate(PolicyProperty::runs_on_bound_gpu, fmt::format("partition {} in a slab of gpu{}'s pool handed to {}",
                                                             assignment->partition, settings_.policy.pool_of_slab(*slab),
                                                             worker_resource(worker)));
    worker_busy_[worker] = true;
    copying_.push_back({assignment->partition, worker, clock_s_, clock_s_, false});
    return true;
  }

  // The indices of the copies that `select` picks.
  template <class Select>
  std::vector<std::size_t> copies_where(Select&& select) const {
    std::vector<std::size_t> picked;
    for (std::size_t i = 0; i < copying_.size(); ++i)
      if (select(copying_[i])) picked.push_back(i);
    return picked;
  }
  bool copy_may_finish(const Copy& copy) const { return !copy.stalled && copy.done_at_s <= clock_s_; }

  bool finish_copy(std::uint32_t pick) {
    const std::vector<std::size_t> done = copies_where([&](const Copy& copy) { return copy_may_finish(copy); });
    if (done.empty()) return false;
    const Copy copy = take(copying_, done[pick % done.size()]);
    policy_.copy_finished(copy.partition);
    record(copy.partition, trace::Phase::h2d, fmt::format("pcie{}:h2d", gpu_of(copy.worker)), copy.start_s,
           settings_.policy.partition_host_bytes);
    copied_.push_back({copy.partition, copy.worker, 0});
    return true;
  }

  bool begin_compute(std::uint32_t pick) {
    std::vector<std::size_t> startable;
    for (std::size_t i = 0; i < copied_.size(); ++i)
      if (!computing_[gpu_of(copied_[i].worker)]) startable.push_back(i);
    if (startable.empty()) return false;
    Compute compute = take(copied_, startable[pick % startable.size()]);
    compute.start_s = clock_s_;
    computing_[gpu_of(compute.worker)] = compute;
    return true;
  }

  // A GPU's compute section ends: its kernels done (the proof assembled), or failed.
  bool end_compute(std::uint32_t pick, bool failed) {
    std::vector<std::uint32_t> busy_gpus;
    for (std::uint32_t gpu = 0; gpu < computing_.size(); ++gpu)
      if (computing_[gpu]) busy_gpus.push_back(gpu);
    if (busy_gpus.empty()) return false;
    const std::uint32_t gpu = busy_gpus[pick % busy_gpus.size()];
    const Compute compute = *computing_[gpu];
    computing_[gpu].reset();
    worker_busy_[compute.worker] = false;
    record(compute.partition, trace::Phase::ntt, worker_resource(compute.worker), compute.start_s, 0);
    if (failed) {
      ++faults_.gpu_errors;
      policy_.attempt_failed(compute.partition);
      return true;
    }
    policy_.attempt_succeeded(compute.partition);
    record(compute.partition, trace::Phase::assemble, "cpu:assemble", clock_s_, 0);
    return true;
  }

  bool watchdog_fires(std::uint32_t pick) {
    const std::vector<std::size_t> stalled = copies_where([](const Copy& copy) { return copy.stalled; });
    if (stalled.empty()) return false;
    const Copy copy = take(copying_, stalled[pick % stalled.size()]);
    worker_busy_[copy.worker] = false;
    record(copy.partition, trace::Phase::h2d, fmt::format("pcie{}:h2d", gpu_of(copy.worker)), copy.start_s, 0);
    policy_.attempt_failed(copy.partition);
    return true;
  }

  bool pinned_allocation_fails() {
    if (pinned_allocation_failed_) return false;
    pinned_allocation_failed_ = true;
    ++faults_.pinned_allocation_failures;
    policy_.pinned_allocation_failed();
    return true;
  }

  bool slow_or_stall_a_copy(std::uint32_t pick, bool stall) {
    const std::vector<std::size_t> running = copies_where([&](const Copy& copy) { return copy_may_finish(copy); });
    if (running.empty()) return false;
    Copy& copy = copying_[running[pick % running.size()]];
    if (stall) {
      copy.stalled = true;
      ++faults_.stalled_transfers;
    } else {
      copy.done_at_s = clock_s_ + 2 + pick % 8;  // at least two more events before it can finish
      ++faults_.slow_transfers;
    }
    return true;
  }

  bool worker_dies(std::uint32_t pick) {
    const policy::WorkerId worker = pick % workers();
    if (!policy_.worker_alive(worker)) return false;
    ++faults_.worker_deaths;
    worker_busy_[worker] = false;
    for (std::size_t i = copying_.size(); i-- > 0;) {
      if (copying_[i].worker != worker) continue;
      const Copy copy = take(copying_, i);
      record(copy.partition, trace::Phase::h2d, fmt::format("pcie{}:h2d", gpu_of(worker)), copy.start_s, 0);
    }
    std::erase_if(copied_, [&](const Compute& compute) { return compute.worker == worker; });
    std::optional<Compute>& compute = computing_[gpu_of(worker)];
    if (compute && compute->worker == worker) {
      record(compute->partition, trace::Phase::ntt, worker_resource(worker), compute->start_s, 0);
      compute.reset();
    }
    policy_.worker_died(worker);
    drop_ready_taken_back();
    return true;
  }

  // The policy's promises after every event.
  void check_step() {
    const auto& counters = policy_.counters();
    const auto leases = policy_.slab_leases();
    const policy::PolicySettings& p = settings_.policy;
    std::set<policy::SlabId> slabs;
    std::vector<std::uint32_t> leased_by_pool(p.pools());
    for (const auto& [partition, slab] : leases) {
      if (slab >= p.pools() * p.pool_slabs) {
        violate(PolicyProperty::leases_within_pool,
                fmt::format("slab {} leased from {} pool(s) of {}", slab, p.pools(), p.pool_slabs));
        continue;
      }
      if (!slabs.insert(slab).second)
        violate(PolicyProperty::leases_within_pool, fmt::format("slab {} held twice (partition {} among them)", slab, partition));
      ++leased_by_pool[p.pool_of_slab(slab)];
    }
    for (std::uint32_t pool = 0; pool < p.pools(); ++pool)
      if (leased_by_pool[pool] > p.pool_slabs)
        violate(PolicyProperty::leases_within_pool,
                fmt::format("{} leases from pool {} of {} slabs", leased_by_pool[pool], pool, p.pool_slabs));
    // Attempts that hold a/b/c: synthesizing, synthesized and not yet assigned, copying.
    std::uint32_t holders = 0, slab_holders = 0;
    auto count = [&](policy::PartitionId id) {
      ++holders;
      slab_holders += granted_slab_[id].has_value();
    };
    for (const Synthesis& synthesis : synthesizing_) count(synthesis.partition);
    for (policy::PartitionId id : ready_) count(id);
    for (const Copy& copy : copying_) count(copy.partition);
    if (leases.size() != slab_holders)
      violate(PolicyProperty::leases_within_pool,
              fmt::format("{} slabs leased but {} attempts hold one (a lease not returned, or lost)", leases.size(), slab_holders));
    if (counters.reserved_bytes > settings_.policy.host_budget_bytes)
      violate(PolicyProperty::reserved_within_budget,
              fmt::format("{} bytes reserved, above the budget of {}", counters.reserved_bytes, settings_.policy.host_budget_bytes));
    if (counters.reserved_bytes != std::uint64_t(holders) * settings_.policy.partition_host_bytes)
      violate(PolicyProperty::reserved_within_budget,
              fmt::format("{} bytes reserved while {} attempts hold {} bytes each", counters.reserved_bytes, holders,
                          settings_.policy.partition_host_bytes));
    std::uint32_t ended = 0;
    for (policy::PartitionId id = 0; id < settings_.policy.partitions; ++id) {
      const policy::PartitionOutcome now = policy_.outcome(id);
      if (outcomes_[id] != policy::PartitionOutcome::pending && now != outcomes_[id])
        violate(PolicyProperty::ends_exactly_once, fmt::format("partition {} ended twice, differently", id));
      outcomes_[id] = now;
      ended += now != policy::PartitionOutcome::pending;
    }
    if (ended != counters.proved + counters.failed)
      violate(PolicyProperty::ends_exactly_once,
              fmt::format("{} partitions ended but the policy counts {} proved + {} failed", ended, counters.proved, counters.failed));
    // Nothing in flight and the job unfinished: the policy must admit something now, or no
    // event could ever happen again.
    const bool idle = synthesizing_.empty() && ready_.empty() && copying_.empty() && copied_.empty() &&
                      std::ranges::none_of(computing_, [](const auto& compute) { return compute.has_value(); });
    if (idle && !policy_.finished()) {
      Policy probe = policy_;
      if (!std::holds_alternative<policy::SynthesisGrant>(probe.request_synthesis()))
        violate(PolicyProperty::no_deadlock, "nothing in flight, work remains, and the policy admits nothing");
    }
  }

  // Completes the job without faults: every round performs each fault-free event it can. A
  // round in which nothing can happen while work remains is a deadlock; so is a job that needs
  // more rounds than the bound (a partition attempt takes at most six rounds, a slow copy waits
  // at most nine events).
  void drain() {
    const std::uint64_t bound = 6ull * (settings_.policy.retry_limit + 1) * settings_.policy.partitions + 16;
    for (std::uint64_t round = 0; !policy_.finished(); ++round) {
      if (round > bound) {
        violate(PolicyProperty::no_deadlock, fmt::format("the job did not finish within {} fault-free rounds", bound));
        return;
      }
      bool progressed = false;
      for (std::uint32_t gpu = 0; gpu < computing_.size(); ++gpu) progressed |= apply(EventKind::finish_compute, 0);
      while (apply(EventKind::watchdog_fires, 0)) progressed = true;
      while (apply(EventKind::begin_compute, 0)) progressed = true;
      while (apply(EventKind::finish_copy, 0)) progressed = true;
      while (apply(EventKind::finish_synthesis, 0)) progressed = true;
      for (policy::WorkerId worker = 0; worker < workers(); ++worker) progressed |= apply(EventKind::assign_gpu_work, worker);
      while (apply(EventKind::start_synthesis, 0)) progressed = true;
      const bool slow_copy_pending = std::ranges::any_of(copying_, [&](const Copy& copy) { return copy.done_at_s > clock_s_; });
      if (!progressed && slow_copy_pending) {
        clock_s_ += 1;  // time passes for the slow copy
        progressed = true;
      }
      if (!progressed && !policy_.finished()) {
        violate(PolicyProperty::no_deadlock, "work remains and no fault-free event can happen");
        return;
      }
    }
  }

  HarnessSettings settings_;
  Policy policy_;
  std::vector<bool> thread_busy_;
  std::vector<bool> worker_busy_;
  std::vector<Synthesis> synthesizing_;
  std::vector<policy::PartitionId> ready_;  // synthesized, not yet assigned
  std::vector<Copy> copying_;
  std::vector<Compute> copied_;                  // waiting for their GPU's compute section
  std::vector<std::optional<Compute>> computing_;  // per GPU
  std::vector<policy::PartitionOutcome> outcomes_;
  std::vector<std::optional<policy::SlabId>> granted_slab_;  // the slab granted to each partition's current attempt
  bool pinned_allocation_failed_ = false;
  double clock_s_ = 0;
  std::uint32_t events_applied_ = 0;
  trace::Trace spans_;
  faults::FaultCounts faults_;
  std::vector<PolicyViolation> violations_;
};

}  // namespace zkpipe::properties
