// Shrunk cases the properties found, kept as named regressions (README.md explains each): four
// scheduling anomalies that are real and stay, and model bugs around a worker that dies
// mid-attempt, fixed in model/simulation.cpp and model/costed_work.hpp.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "property_suite.hpp"
#include "simulation.hpp"
#include "trace/invariants.hpp"
#include "trace/summary.hpp"

namespace zkpipe::properties {
namespace {

// ModelProperties/PinnedNeverSlowerThanPageable, shrunk: two partitions, two synthesis threads,
// in-flight limit 2, but one pinned slab. The slab is held from synthesis start to copy end, so
// pinned staging synthesizes one partition at a time while pageable synthesizes both at once.
TEST(Regressions, PinnedStagingWithAPoolSmallerThanTheInFlightLimitIsSlowerThanPageable) {
  ScenarioChoice choice{.seed = 1, .partitions = 2, .lg_constraints = 16, .synthesis_threads = 2,
                        .partitions_in_flight = 2, .staging = policy::Staging::pinned, .pool_slabs = 1,
                        .budget_partitions = 2, .gpus = 1, .workers_per_gpu = 1, .copy_engines = 1,
                        .pcie_h2d_gbps = 4, .retry_limit = 0};
  const double pinned_one_slab_s = simulated_makespan_s(choice.build());
  choice.staging = policy::Staging::pageable;
  const double pageable_s = simulated_makespan_s(choice.build());
  EXPECT_GT(pinned_one_slab_s, pageable_s * 1.2) << "the anomaly is gone: update README.md";
  choice.staging = policy::Staging::pinned;
  choice.pool_slabs = 2;  // a pool as large as the in-flight limit never binds
  EXPECT_LE(simulated_makespan_s(choice.build()), pageable_s);
}

// Seconds during which a partition whose copy had ended waited for its GPU's first kernel while
// another GPU ran no kernel at all.
double queued_while_another_gpu_idled_s(const trace::Trace& spans) {
  std::map<std::uint32_t, double> copied_s, first_kernel_s;
  std::map<std::uint32_t, std::string> gpu_of;
  std::map<std::string, std::vector<std::pair<double, double>>> kernels_of_gpu;
  for (const trace::Span& span : spans) {
    if (span.phase == trace::Phase::h2d && span.items > 0) copied_s[span.partition] = span.end_s;
    if (!trace::is_gpu_compute(span.phase)) continue;
    const std::string gpu = trace::gpu_of_resource(span.resource);
    kernels_of_gpu[gpu].emplace_back(span.start_s, span.end_s);
    if (!first_kernel_s.contains(span.partition) || span.start_s < first_kernel_s[span.partition]) {
      first_kernel_s[span.partition] = span.start_s;
      gpu_of[span.partition] = gpu;
    }
  }
  double queued_s = 0;
  for (const auto& [partition, ready_s] : copied_s)
    for (const auto& [gpu, kernels] : kernels_of_gpu) {
      if (gpu == gpu_of[partition]) continue;
      // The other GPU's idle time within [ready, first kernel], in steps between kernel edges.
      std::vector<double> edges{ready_s, first_kernel_s[partition]};
      for (const auto& [start_s, end_s] : kernels) edges.push_back(start_s), edges.push_back(end_s);
      std::ranges::sort(edges);
      for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
        const double from = std::max(edges[i], ready_s), to = std::min(edges[i + 1], first_kernel_s[partition]);
        const double mid = (from + to) / 2;
        if (to > from && std::ranges::none_of(kernels, [&](const auto& k) { return k.first <= mid && mid < k.second; }))
          queued_s += to - from;
      }
    }
  return queued_s;
}

// ModelProperties/PinnedNeverSlowerThanPageable, fault-free, shrunk: 5 partitions, 2 GPUs with 2
// workers each. Pinned copies end sooner and unevenly (one copy on pcie1, two on pcie0), so the
// next two partitions are admitted at slightly different times and, when they are ready, the
// workers that ask first both sit on gpu1. While the policy handed a partition to whichever idle
// worker asked, partition 4 then queued for gpu1's compute section while gpu0 idled (8.2 ms).
// Since 2026-12-05 a ready partition goes to a waiting worker on the GPU running the fewest
// attempts: 3 and 4 run on different GPUs and nothing queues while a GPU idles.
TEST(Regressions, ReadyPartitionsGoToTheLeastBusyGpu) {
  ScenarioChoice choice{.seed = 1, .partitions = 5, .lg_constraints = 16, .synthesis_threads = 3,
                        .partitions_in_flight = 3, .staging = policy::Staging::pinned, .pool_slabs = 3,
                        .budget_partitions = 3, .gpus = 2, .workers_per_gpu = 2, .copy_engines = 2,
                        .pcie_h2d_gbps = 9, .retry_limit = 0};
  const model::SimulationResult pinned = model::simulate(choice.build());
  std::map<std::uint32_t, std::string> gpu_of_partition;
  for (const trace::Span& span : pinned.spans)
    if (span.phase == trace::Phase::ntt) gpu_of_partition[span.partition] = trace::gpu_of_resource(span.resource);
  EXPECT_NE(gpu_of_partition[3], gpu_of_partition[4]);
  EXPECT_EQ(queued_while_another_gpu_idled_s(pinned.spans), 0.0);
  const double pinned_s = trace::summarize(pinned.spans).makespan_s;
  choice.staging = policy::Staging::pageable;
  EXPECT_LE(pinned_s, simulated_makespan_s(choice.build()));
}

// ModelProperties/PinnedNeverSlowerThanPageable over per-GPU pools, shrunk: 8 partitions, 2 GPUs
// with one worker each, 3 slabs per GPU. A partition is bound to a GPU when it is admitted, long
// before it is ready: partitions 6 and 7 are admitted together while gpu1 still has two bound
// (3 computing, 5 synthesizing) and gpu0 one, so 6 goes to gpu0 and 7, on the tie, too. gpu1 then
// idles while 7 waits for gpu0. Pageable staging binds nothing: a waiting worker on the least busy
// GPU takes the next ready partition, as with one pool per host.
TEST(Regressions, PerGpuPoolsBindAtAdmissionAndCanBeSlowerThanPageable) {
  ScenarioChoice choice{.seed = 1, .partitions = 8, .lg_constraints = 16, .synthesis_threads = 3,
                        .partitions_in_flight = 3, .staging = policy::Staging::pinned, .pool_slabs = 3,
                        .pool_layout = policy::PoolLayout::per_gpu, .budget_partitions = 3, .gpus = 2,
                        .workers_per_gpu = 1, .copy_engines = 1, .pcie_h2d_gbps = 4, .retry_limit = 0};
  const model::SimulationResult per_gpu = model::simulate(choice.build());
  choice.staging = policy::Staging::pageable;
  const double pageable_s = simulated_makespan_s(choice.build());
  EXPECT_GT(trace::summarize(per_gpu.spans).makespan_s, pageable_s * 1.05) << "the anomaly is gone: update README.md";
  std::map<std::uint32_t, std::string> gpu_of_partition;
  for (const trace::Span& span : per_gpu.spans)
    if (span.phase == trace::Phase::ntt) gpu_of_partition[span.partition] = trace::gpu_of_resource(span.resource);
  EXPECT_EQ(gpu_of_partition[6], "gpu0");
  EXPECT_EQ(gpu_of_partition[7], "gpu0");
  choice.staging = policy::Staging::pinned;
  choice.pool_layout = policy::PoolLayout::per_host;  // late binding, as pageable
  EXPECT_LE(simulated_makespan_s(choice.build()), pageable_s);
}

// ModelProperties/PinnedNeverSlowerThanPageable with faults (GPU errors, stalled copies keyed to
// the same attempts either way), from `zkpipe soak`: partition 2's first attempt fails on the
// GPU. While the policy handed a partition to whichever idle worker asked, faster pinned copies
// freed an in-flight slot before that failure, so new partition 10 was admitted first and
// partition 2's retry (whose copy stalls, and it is then reported failed) started 0.12 s later
// than with pageable copies: that doomed retry was the job's tail, pinned 4 % slower. With
// partitions going to the least busy GPU (2026-12-05) the attempts land elsewhere and pinned is
// faster here; the anomaly (Graham's: list scheduling is not monotone in task times) can still
// arise, which is why the comparative properties run fault-free.
TEST(Regressions, FasterCopiesLengthenedAJobWithStalledCopies) {
  ScenarioChoice choice{.seed = 168162, .partitions = 11, .lg_constraints = 18, .synthesis_threads = 6,
                        .partitions_in_flight = 6, .staging = policy::Staging::pinned, .pool_slabs = 6,
                        .budget_partitions = 6, .gpus = 3, .workers_per_gpu = 2, .copy_engines = 1,
                        .pcie_h2d_gbps = 7, .retry_limit = 1, .gpu_error_probability = 0.01,
                        .slow_transfer_probability = 0.01, .stalled_transfer_probability = 0.1};
  const double pinned_s = simulated_makespan_s(choice.build());
  choice.staging = policy::Staging::pageable;
  EXPECT_LT(pinned_s, simulated_makespan_s(choice.build()));
}

void expect_invariants_hold(const ScenarioChoice& choice) {
  const model::Scenario scenario = choice.build();
  const model::SimulationResult result = model::simulate(scenario);
  EXPECT_EQ(trace::format_violations(trace::check_invariants(result.spans, model::trace_expectations(scenario, result))), "");
}

// The only worker died while computing; the model assembled the proof anyway (assemble span,
// no attempt_succeeded): ends_exactly_once saw 1 assembled, 0 proved.
TEST(Regressions, AWorkerThatDiesComputingAssemblesNoProof) {
  expect_invariants_hold({.seed = 3, .partitions = 3, .lg_constraints = 16, .synthesis_threads = 3,
                          .partitions_in_flight = 3, .staging = policy::Staging::pinned, .pool_slabs = 3,
                          .budget_partitions = 3, .gpus = 1, .workers_per_gpu = 1, .copy_engines = 1,
                          .pcie_h2d_gbps = 4, .retry_limit = 0, .worker_death_s = {0.036}});
}

// The worker died during the CPU assembly that follows its GPU work: same symptom.
TEST(Regressions, AWorkerThatDiesAssemblingAssemblesNoProof) {
  expect_invariants_hold({.seed = 4, .partitions = 3, .lg_constraints = 18, .synthesis_threads = 3,
                          .partitions_in_flight = 3, .staging = policy::Staging::pinned, .pool_slabs = 3,
                          .budget_partitions = 3, .gpus = 1, .workers_per_gpu = 1, .copy_engines = 1,
                          .pcie_h2d_gbps = 33, .retry_limit = 0, .worker_death_s = {0.152}});
}

// Both workers died while copying; the dead workers' copies ran on after the policy had
// requeued (and reissued the staging of) their partitions: phases_in_order saw a copy of the
// new attempt start before its synthesis ended.
TEST(Regressions, AWorkerThatDiesCopyingDiesWhenItsCopyEnds) {
  expect_invariants_hold({.seed = 2, .partitions = 3, .lg_constraints = 17, .synthesis_threads = 3,
                          .partitions_in_flight = 3, .staging = policy::Staging::pinned, .pool_slabs = 3,
                          .budget_partitions = 3, .gpus = 1, .workers_per_gpu = 2, .copy_engines = 1,
                          .pcie_h2d_gbps = 4, .retry_limit = 0, .worker_death_s = {0.07, 0.069}});
}

// A worker died copying while two slabs served four partitions in flight: its copy kept
// reading a slab the policy had already leased to the next synthesis (three holders, two slabs).
TEST(Regressions, ASlabIsNotReissuedWhileADeadWorkersCopyReadsIt) {
  expect_invariants_hold({.seed = 14, .partitions = 8, .lg_constraints = 18, .synthesis_threads = 4,
                          .partitions_in_flight = 4, .staging = policy::Staging::pinned, .pool_slabs = 2,
                          .budget_partitions = 4, .gpus = 1, .workers_per_gpu = 3, .copy_engines = 2,
                          .pcie_h2d_gbps = 2, .retry_limit = 2, .worker_death_s = {0.14}});
}

// A worker died computing and launched its remaining kernels anyway, interleaved with the
// requeued attempt's synthesis and copy on another worker.
TEST(Regressions, ADeadWorkerLaunchesNoMoreKernels) {
  expect_invariants_hold({.seed = 188, .partitions = 3, .lg_constraints = 18, .synthesis_threads = 3,
                          .partitions_in_flight = 3, .staging = policy::Staging::pinned, .pool_slabs = 3,
                          .budget_partitions = 3, .gpus = 1, .workers_per_gpu = 2, .copy_engines = 1,
                          .pcie_h2d_gbps = 9, .retry_limit = 0, .slow_transfer_probability = 0.07,
                          .stalled_transfer_probability = 0.02, .worker_death_s = {0.148}});
}

// With the key streamed, the only worker died during an MSM and went on copying its chunks, one
// of them after the requeued attempt's synthesis began.
TEST(Regressions, ADeadWorkerStreamsNoMoreChunks) {
  expect_invariants_hold({.seed = 1, .partitions = 1, .lg_constraints = 18, .synthesis_threads = 1,
                          .partitions_in_flight = 1, .staging = policy::Staging::pageable, .pool_slabs = 1,
                          .budget_partitions = 1, .gpus = 1, .workers_per_gpu = 2, .copy_engines = 1,
                          .pcie_h2d_gbps = 30, .retry_limit = 0, .worker_death_s = {0.137},
                          .stream_chunk_points = 1 << 18});
}

// With the key streamed, a worker that died while it waited for the copy engine (held by the
// other worker's copy) then copied its next chunk.
TEST(Regressions, ADeadWorkerThatWaitedForTheCopyEngineCopiesNothing) {
  expect_invariants_hold({.seed = 25, .partitions = 4, .lg_constraints = 17, .synthesis_threads = 2,
                          .partitions_in_flight = 2, .staging = policy::Staging::pageable, .pool_slabs = 1,
                          .pool_layout = policy::PoolLayout::per_gpu, .budget_partitions = 2, .gpus = 1,
                          .workers_per_gpu = 2, .copy_engines = 1, .pcie_h2d_gbps = 15, .retry_limit = 0,
                          .worker_death_s = {0.14}, .stream_chunk_points = 1 << 14});
}

}  // namespace
}  // namespace zkpipe::properties
