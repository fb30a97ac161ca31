// Tests of policy::SchedulingPolicy: named cases, then a RapidCheck property that drives it through
// PolicyHarness with random settings and random interleavings of events (faults included) and
// checks its promises.
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "policy/scheduling_policy.hpp"
#include "policy_events.hpp"

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

// Two GPUs with two workers each (workers 0, 1 on gpu0; 2, 3 on gpu1), gpu0 running a partition:
// the next ready partition goes to a waiting worker of gpu1, not to gpu0's other worker, even
// when that one asks first; once gpu1 runs one too, either GPU's worker may take the next.
TEST(SchedulingPolicy, AReadyPartitionGoesToAWaitingWorkerOnTheLeastBusyGpu) {
  PolicySettings settings = small_settings();
  settings.staging = Staging::pageable;
  settings.host_budget_bytes = 4 * gib;
  settings.gpus = 2;
  settings.workers_per_gpu = 2;
  SchedulingPolicy policy(settings);
  auto ready_partition = [&] {
    const auto grant = std::get<SynthesisGrant>(policy.request_synthesis());
    policy.synthesis_finished(grant.partition);
    return grant.partition;
  };
  for (WorkerId worker = 0; worker < 4; ++worker) EXPECT_FALSE(policy.request_gpu_work(worker));  // all wait
  const PartitionId first = ready_partition();
  ASSERT_TRUE(policy.request_gpu_work(0));
  const PartitionId second = ready_partition();
  EXPECT_FALSE(policy.request_gpu_work(1)) << "gpu1 idles while worker 2 waits";
  const auto on_gpu1 = policy.request_gpu_work(2);
  ASSERT_TRUE(on_gpu1);
  EXPECT_EQ(on_gpu1->partition, second);
  const PartitionId third = ready_partition();
  const auto on_gpu0 = policy.request_gpu_work(1);
  ASSERT_TRUE(on_gpu0) << "both GPUs run one: no other is less busy";
  EXPECT_EQ(on_gpu0->partition, third);
  policy.copy_finished(first);
  policy.attempt_succeeded(first);
  const PartitionId fourth = ready_partition();
  policy.worker_died(0);  // gpu0 now runs one attempt (worker 1's), gpu1 one: equal again
  EXPECT_TRUE(policy.request_gpu_work(3));
  EXPECT_FALSE(policy.waiting_for_gpu(fourth));
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

// Every promise of the policy at once, through the property suite's harness (its named
// properties check one each): this build runs under the sanitizers in CI.
RC_GTEST_PROP(SchedulingPolicyProperty, KeepsItsPromisesUnderRandomEventsAndFaults, ()) {
  const properties::HarnessSettings settings = *properties::arbitrary_harness_settings();
  properties::PolicyHarness<SchedulingPolicy> harness(settings);
  rc::state::check(settings, harness, &properties::arbitrary_event<SchedulingPolicy>);
  harness.finish();
  for (const properties::PolicyViolation& violation : harness.violations())
    RC_FAIL(std::string(properties::property_name(violation.property)) + " violated " + violation.detail);
}

}  // namespace
}  // namespace zkpipe::policy
