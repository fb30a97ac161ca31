// Tests of policy::SchedulingPolicy: named cases, then a RapidCheck property that drives it with
// random settings and random interleavings of events (faults included) and checks its promises.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "policy/scheduling_policy.hpp"

namespace zkpipe::policy {
namespace {

constexpr std::uint64_t gib = 1ull << 30;

PolicySettings small_settings() {
  PolicySettings settings;
  settings.partitions = 4;
  settings.partition_host_bytes = 1 * gib;
  settings.host_budget_bytes = 2 * gib;
  settings.partitions_in_flight_max = 4;
  settings.staging = Staging::pinned;
  settings.pool_slabs = 1;
  settings.gpus = 1;
  settings.workers_per_gpu = 1;
  settings.retry_limit = 1;
  return settings;
}

TEST(SchedulingPolicy, RejectsABudgetSmallerThanOnePartition) {
  PolicySettings settings = small_settings();
  settings.host_budget_bytes = gib / 2;
  EXPECT_THROW(SchedulingPolicy{settings}, std::invalid_argument);
}

TEST(SchedulingPolicy, WaitsForThePoolWhenEverySlabIsLeased) {
  SchedulingPolicy policy(small_settings());
  const auto first = policy.request_synthesis();
  ASSERT_TRUE(std::holds_alternative<SynthesisGrant>(first));
  EXPECT_EQ(std::get<SynthesisGrant>(first).backing.slab, SlabId{0});
  EXPECT_EQ(std::get<WaitReason>(policy.request_synthesis()), WaitReason::pool);
}

TEST(SchedulingPolicy, WaitsForTheBudgetWhenReservationsWouldExceedIt) {
  PolicySettings settings = small_settings();
  settings.staging = Staging::pageable;
  SchedulingPolicy policy(settings);
  ASSERT_TRUE(std::holds_alternative<SynthesisGrant>(policy.request_synthesis()));
  ASSERT_TRUE(std::holds_alternative<SynthesisGrant>(policy.request_synthesis()));
  EXPECT_EQ(std::get<WaitReason>(policy.request_synthesis()), WaitReason::budget);
  EXPECT_EQ(policy.counters().reserved_bytes, 2 * gib);
}

TEST(SchedulingPolicy, ReturnsSlabAndBudgetWhenTheCopyFinishes) {
  SchedulingPolicy policy(small_settings());
  const auto grant = std::get<SynthesisGrant>(policy.request_synthesis());
  policy.synthesis_finished(grant.partition);
  const auto assignment = policy.request_gpu_work(0);
  ASSERT_TRUE(assignment);
  EXPECT_EQ(assignment->partition, grant.partition);
  policy.copy_finished(grant.partition);
  EXPECT_EQ(policy.counters().slabs_leased, 0u);
  EXPECT_EQ(policy.counters().reserved_bytes, 0u);
  EXPECT_TRUE(std::holds_alternative<SynthesisGrant>(policy.request_synthesis()));
}

TEST(SchedulingPolicy, ReportsAPartitionFailedAfterItsRetryLimit) {
  PolicySettings settings = small_settings();
  settings.partitions = 1;
  SchedulingPolicy policy(settings);
  for (std::uint32_t attempt = 0; attempt <= settings.retry_limit; ++attempt) {
    const auto grant = std::get<SynthesisGrant>(policy.request_synthesis());
    EXPECT_EQ(grant.attempt, attempt);
    policy.synthesis_finished(grant.partition);
    ASSERT_TRUE(policy.request_gpu_work(0));
    policy.attempt_failed(grant.partition);
  }
  EXPECT_EQ(policy.outcome(0), PartitionOutcome::failed);
  EXPECT_TRUE(policy.finished());
  EXPECT_EQ(policy.counters().slabs_leased, 0u);
}

TEST(SchedulingPolicy, FallsBackToPageableWhenThePoolCannotBePinned) {
  SchedulingPolicy policy(small_settings());
  policy.pinned_allocation_failed();
  const auto grant = std::get<SynthesisGrant>(policy.request_synthesis());
  EXPECT_EQ(grant.backing.staging, Staging::pageable);
  EXPECT_FALSE(grant.backing.slab);
}

TEST(SchedulingPolicy, RequeuesADeadWorkersPartitionWithoutChargingARetry) {
  PolicySettings settings = small_settings();
  settings.workers_per_gpu = 2;
  settings.partitions = 1;
  SchedulingPolicy policy(settings);
  const auto grant = std::get<SynthesisGrant>(policy.request_synthesis());
  policy.synthesis_finished(grant.partition);
  ASSERT_TRUE(policy.request_gpu_work(0));
  policy.worker_died(0);
  EXPECT_FALSE(policy.request_gpu_work(0));
  const auto again = std::get<SynthesisGrant>(policy.request_synthesis());
  EXPECT_EQ(again.attempt, 0u);
  policy.synthesis_finished(again.partition);
  ASSERT_TRUE(policy.request_gpu_work(1));
  policy.copy_finished(again.partition);
  policy.attempt_succeeded(again.partition);
  EXPECT_EQ(policy.outcome(0), PartitionOutcome::proved);
}

TEST(SchedulingPolicy, FailsEverythingLeftWhenTheLastWorkerDies) {
  PolicySettings settings = small_settings();
  SchedulingPolicy policy(settings);
  const auto grant = std::get<SynthesisGrant>(policy.request_synthesis());
  policy.worker_died(0);
  EXPECT_FALSE(policy.finished());  // one partition is still being synthesized
  policy.synthesis_finished(grant.partition);
  EXPECT_TRUE(policy.finished());
  EXPECT_EQ(policy.counters().failed, settings.partitions);
  EXPECT_EQ(policy.counters().slabs_leased, 0u);
  EXPECT_EQ(policy.counters().reserved_bytes, 0u);
}

// --- one pinned pool per GPU -----------------------------------------------------------------

PolicySettings per_gpu_settings() {
  PolicySettings settings = small_settings();
  settings.pool_layout = PoolLayout::per_gpu;
  settings.gpus = 2;
  settings.host_budget_bytes = 8 * gib;
  settings.partitions_in_flight_max = 8;
  return settings;
}

SynthesisGrant grant_of(SchedulingPolicy& policy) { return std::get<SynthesisGrant>(policy.request_synthesis()); }

TEST(SchedulingPolicy, PerGpuPoolsGiveEachGpuItsOwnSlabsAndBindThePartitionThere) {
  SchedulingPolicy policy(per_gpu_settings());  // 2 GPUs x 1 slab
  const SynthesisGrant first = grant_of(policy), second = grant_of(policy);
  EXPECT_EQ(first.backing.gpu, 0u);
  EXPECT_EQ(first.backing.slab, SlabId{0});
  EXPECT_EQ(second.backing.gpu, 1u);
  EXPECT_EQ(second.backing.slab, SlabId{1});
  EXPECT_EQ(std::get<WaitReason>(policy.request_synthesis()), WaitReason::pool);
  EXPECT_EQ(policy.settings().pool_of_slab(*second.backing.slab), 1u);
}

TEST(SchedulingPolicy, PerGpuPoolsNeverLendOneGpusSlabToAnother) {
  PolicySettings settings = per_gpu_settings();
  settings.partitions = 5;
  settings.pool_slabs = 2;
  SchedulingPolicy policy(settings);
  // Ties go to the lowest GPU, then to the GPU with fewer partitions waiting: 0, 1, 0, 1.
  for (std::uint32_t gpu : {0u, 1u, 0u, 1u}) {
    const SynthesisGrant grant = grant_of(policy);
    EXPECT_EQ(grant.backing.gpu, gpu);
    EXPECT_EQ(settings.pool_of_slab(*grant.backing.slab), gpu) << "slab " << *grant.backing.slab;
  }
  EXPECT_EQ(std::get<WaitReason>(policy.request_synthesis()), WaitReason::pool);
  EXPECT_EQ(policy.counters().slabs_leased, 4u);
}

TEST(SchedulingPolicy, PerGpuPoolsBindToTheGpuWithTheFewestAttemptsWaitingOrRunning) {
  PolicySettings settings = per_gpu_settings();
  settings.pool_slabs = 2;
  SchedulingPolicy policy(settings);
  const SynthesisGrant first = grant_of(policy);
  policy.synthesis_finished(first.partition);
  ASSERT_TRUE(policy.request_gpu_work(0));
  policy.copy_finished(first.partition);  // its slab is back, but it still runs on gpu0
  EXPECT_EQ(grant_of(policy).backing.gpu, 1u);
  policy.attempt_succeeded(first.partition);
  EXPECT_EQ(grant_of(policy).backing.gpu, 0u);
  EXPECT_EQ(grant_of(policy).backing.gpu, 0u);  // a tie: the lowest-numbered GPU
}

TEST(SchedulingPolicy, ABoundPartitionIsHandedOnlyToItsGpusWorkers) {
  SchedulingPolicy policy(per_gpu_settings());
  const SynthesisGrant grant = grant_of(policy);
  ASSERT_EQ(grant.backing.gpu, 0u);
  policy.synthesis_finished(grant.partition);
  EXPECT_FALSE(policy.request_gpu_work(1)) << "gpu1's worker took a partition bound to gpu0";
  const auto assignment = policy.request_gpu_work(0);
  ASSERT_TRUE(assignment);
  EXPECT_EQ(assignment->partition, grant.partition);
}

TEST(SchedulingPolicy, APartitionBoundToAGpuWithNoLiveWorkerIsRequeuedForAnotherWithoutARetry) {
  PolicySettings settings = per_gpu_settings();
  settings.partitions = 3;
  SchedulingPolicy policy(settings);
  const SynthesisGrant on_gpu0 = grant_of(policy), on_gpu1 = grant_of(policy);
  policy.synthesis_finished(on_gpu0.partition);
  policy.worker_died(0);  // gpu0 has no worker left: its synthesized partition is released
  EXPECT_FALSE(policy.waiting_for_gpu(on_gpu0.partition));
  EXPECT_EQ(policy.counters().slabs_leased, 1u);
  EXPECT_EQ(policy.outcome(on_gpu0.partition), PartitionOutcome::pending);
  EXPECT_EQ(std::get<WaitReason>(policy.request_synthesis()), WaitReason::pool) << "gpu0's free slab was leased";

  policy.synthesis_finished(on_gpu1.partition);
  ASSERT_TRUE(policy.request_gpu_work(1));
  policy.copy_finished(on_gpu1.partition);
  const SynthesisGrant again = grant_of(policy);
  EXPECT_EQ(again.partition, on_gpu0.partition);
  EXPECT_EQ(again.attempt, 0u);
  EXPECT_EQ(again.backing.gpu, 1u);
}

TEST(SchedulingPolicy, APartitionSynthesizedForAGpuThatLostItsWorkersMeanwhileIsRequeued) {
  SchedulingPolicy policy(per_gpu_settings());
  const SynthesisGrant grant = grant_of(policy);
  ASSERT_EQ(grant.backing.gpu, 0u);
  policy.worker_died(0);
  policy.synthesis_finished(grant.partition);
  EXPECT_FALSE(policy.waiting_for_gpu(grant.partition));
  EXPECT_EQ(policy.counters().slabs_leased, 0u);
  EXPECT_EQ(policy.counters().reserved_bytes, 0u);
  const SynthesisGrant again = grant_of(policy);
  EXPECT_EQ(again.partition, grant.partition);
  EXPECT_EQ(again.backing.gpu, 1u);
}

// --- property: random settings, random event interleavings, faults among them ------------------

struct Driver {
  explicit Driver(const PolicySettings& s) : settings(s), policy(s) {}

  PolicySettings settings;
  SchedulingPolicy policy;
  std::vector<PartitionId> synthesizing;
  std::vector<std::pair<PartitionId, WorkerId>> copying, computing;
  std::vector<PartitionOutcome> outcomes = std::vector<PartitionOutcome>(settings.partitions, PartitionOutcome::pending);

  WorkerId workers() const { return settings.gpus * settings.workers_per_gpu; }

  void forget_dead_workers_work() {
    auto dead = [&](const auto& entry) { return !policy.worker_alive(entry.second); };
    std::erase_if(copying, dead);
    std::erase_if(computing, dead);
  }

  // The policy's promises, checked after every event.
  void check_invariants() {
    const auto leases = policy.slab_leases();
    std::set<SlabId> slabs;
    std::vector<std::uint32_t> leased_by_pool(settings.pools());
    for (const auto& [partition, slab] : leases) {
      RC_ASSERT(slab < settings.pools() * settings.pool_slabs);
      RC_ASSERT(slabs.insert(slab).second);  // no slab held by two partitions
      RC_ASSERT(++leased_by_pool[settings.pool_of_slab(slab)] <= settings.pool_slabs);
    }
    RC_ASSERT(policy.counters().reserved_bytes <= settings.host_budget_bytes);
    std::uint32_t ended = 0;
    for (PartitionId id = 0; id < settings.partitions; ++id) {
      const PartitionOutcome now = policy.outcome(id);
      if (outcomes[id] != PartitionOutcome::pending) RC_ASSERT(now == outcomes[id]);  // ends exactly once
      outcomes[id] = now;
      ended += now != PartitionOutcome::pending;
    }
    RC_ASSERT(ended == policy.counters().proved + policy.counters().failed);
  }

  // Performs event `choice` if it is possible now; returns whether something happened.
  bool step(unsigned choice, unsigned pick, bool faults) {
    switch (choice) {
      case 0: {
        const auto decision = policy.request_synthesis();
        if (const auto* grant = std::get_if<SynthesisGrant>(&decision)) {
          synthesizing.push_back(grant->partition);
          return true;
        }
        return false;
      }
      case 1:
        if (synthesizing.empty()) return false;
        policy.synthesis_finished(synthesizing[pick % synthesizing.size()]);
        synthesizing.erase(synthesizing.begin() + pick % synthesizing.size());
        return true;
      case 2: {
        const WorkerId worker = pick % workers();
        if (auto assignment = policy.request_gpu_work(worker)) {
          if (settings.pool_layout == PoolLayout::per_gpu && assignment->backing.slab) {
            RC_ASSERT(assignment->backing.gpu == worker / settings.workers_per_gpu);  // run only where bound
            RC_ASSERT(settings.pool_of_slab(*assignment->backing.slab) == *assignment->backing.gpu);
          }
          copying.emplace_back(assignment->partition, worker);
          return true;
        }
        return false;
      }
      case 3: {
        if (copying.empty()) return false;
        const auto entry = copying[pick % copying.size()];
        copying.erase(copying.begin() + pick % copying.size());
        policy.copy_finished(entry.first);
        computing.push_back(entry);
        return true;
      }
      case 4: {
        if (computing.empty()) return false;
        const auto entry = computing[pick % computing.size()];
        computing.erase(computing.begin() + pick % computing.size());
        policy.attempt_succeeded(entry.first);
        return true;
      }
      case 5: {  // a GPU error or a failed copy
        if (!faults) return false;
        auto& list = pick % 2 ? computing : copying;
        if (list.empty()) return false;
        const auto entry = list[pick / 2 % list.size()];
        list.erase(list.begin() + pick / 2 % list.size());
        policy.attempt_failed(entry.first);
        return true;
      }
      case 6:  // a worker dies (rarely)
        if (!faults || pick % 16 != 0) return false;
        policy.worker_died(pick / 16 % workers());
        forget_dead_workers_work();
        return true;
      case 7:
        if (!faults || pick % 32 != 0) return false;
        policy.pinned_allocation_failed();
        return true;
    }
    return false;
  }

  // Completes the job without faults, in an order that always makes progress when progress is
  // possible: returns false if no event can happen while partitions remain (a deadlock).
  bool drain() {
    for (std::size_t round = 0; !policy.finished(); ++round) {
      if (round > 100u * settings.partitions + 100) return false;
      bool progressed = false;
      for (unsigned choice : {4u, 3u, 1u}) progressed |= step(choice, 0, false);
      for (WorkerId worker = 0; worker < workers(); ++worker) progressed |= step(2, worker, false);
      progressed |= step(0, 0, false);
      check_invariants();
      if (!progressed) return false;
    }
    return true;
  }
};

rc::Gen<PolicySettings> arbitrary_settings() {
  return rc::gen::exec([] {
    PolicySettings settings;
    settings.partitions = *rc::gen::inRange<std::uint32_t>(1, 24);
    settings.partition_host_bytes = *rc::gen::inRange<std::uint64_t>(1, 4) * gib;
    settings.host_budget_bytes = settings.partition_host_bytes * *rc::gen::inRange<std::uint64_t>(1, 6);
    settings.partitions_in_flight_max = *rc::gen::inRange<std::uint32_t>(1, 8);
    settings.staging = *rc::gen::element(Staging::pinned, Staging::pageable);
    settings.pool_slabs = *rc::gen::inRange<std::uint32_t>(1, 6);
    settings.gpus = *rc::gen::inRange<std::uint32_t>(1, 3);
    settings.workers_per_gpu = *rc::gen::inRange<std::uint32_t>(1, 3);
    settings.retry_limit = *rc::gen::inRange<std::uint32_t>(0, 3);
    settings.pool_layout = *rc::gen::element(PoolLayout::per_host, PoolLayout::per_gpu);
    return settings;
  });
}

RC_GTEST_PROP(SchedulingPolicyProperty, KeepsItsPromisesUnderRandomEventsAndFaults, ()) {
  Driver driver(*arbitrary_settings());
  const auto events = *rc::gen::container<std::vector<std::pair<unsigned, unsigned>>>(
      rc::gen::pair(rc::gen::inRange(0u, 8u), rc::gen::arbitrary<unsigned>()));
  for (const auto& [choice, pick] : events) {
    driver.step(choice, pick, true);
    driver.check_invariants();
  }
  RC_ASSERT(driver.drain());  // no deadlock: the job always completes once faults stop
  RC_ASSERT(driver.policy.counters().proved + driver.policy.counters().failed == driver.settings.partitions);
  RC_ASSERT(driver.policy.counters().slabs_leased == 0u);
  RC_ASSERT(driver.policy.counters().reserved_bytes == 0u);
}

}  // namespace
}  // namespace zkpipe::policy
