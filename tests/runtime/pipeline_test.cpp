// Tests of the one pipeline's choreography with fixed step costs: on logical time, exact timelines
// (who waits for what, when a slab comes back, what holds the GPU), retries charged and not
// charged, lost and dying workers, a delivery that fails; on threads, the same job ends with
// every partition proved once and no two compute sections of a GPU overlapping.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/logical_runtime.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/thread_runtime.hpp"

namespace zkpipe::runtime {
namespace {

using trace::Phase;

struct Costs {
  double synth_s = 1, copy_s = 0.25, split_s = 0.1, kernel_s = 0.5, verify_s = 0.05;
};

// Each step sleeps its cost on the runtime; `fail_compute` and `lose_on_copy` choose failures.
template <class Runtime>
class FixedCostWork {
 public:
  struct Staged {
    std::atomic<int>* live = nullptr;  // counts staged partitions alive, to check they are freed
    Staged() = default;
    Staged(Staged&& other) noexcept : live(std::exchange(other.live, nullptr)) {}
    Staged& operator=(Staged&& other) noexcept {
      release();
      live = std::exchange(other.live, nullptr);
      return *this;
    }
    ~Staged() { release(); }
    void release() {
      if (live) --*live;
      live = nullptr;
    }
  };
  struct Attempt {};

  FixedCostWork(Runtime& runtime, Costs costs) : runtime_(runtime), costs_(costs) {}

  std::function<bool(const Context&)> fail_compute = [](const Context&) { return false; };
  std::function<bool(const Context&)> lose_on_copy = [](const Context&) { return false; };
  std::function<void(const Context&)> on_deliver = [](const Context&) {};
  std::vector<policy::PartitionId> delivered;
  std::vector<std::string> lost;
  std::atomic<int> staged_alive = 0;

  Step synthesize(std::uint32_t, const policy::SynthesisGrant&, Staged& staged, StepSpans& spans) {
    spend(Phase::synth, Where::synthesis, costs_.synth_s, spans);
    staged.live = &staged_alive;
    ++staged_alive;
    return Step::ok();
  }
  void check_handoff(const Context&, const Staged&) const {}
  Step copy_in(const Context& context, Staged&& staged, Attempt&, StepSpans& spans) {
    spend(Phase::h2d, Where::link, costs_.copy_s, spans);
    staged.release();
    return lose_on_copy(context) ? Step::lost("device gone") : Step::ok();
  }
  Step split(const Context&, Attempt&, StepSpans&) {
    runtime_.sleep_until(runtime_.now_s() + costs_.split_s);  // host work without a span of its own
    return Step::ok();
  }
  Step compute(const Context& context, Attempt&, StepSpans& spans) {
    spend(Phase::ntt, Where::gpu, costs_.kernel_s, spans);
    return fail_compute(context) ? Step::failed("kernel error") : Step::ok();
  }
  Step conclude(const Context&, Attempt&, StepSpans& spans) {
    spend(Phase::verify, Where::host, costs_.verify_s, spans);
    return Step::ok();
  }
  void deliver(const Context& context, Attempt&) {
    on_deliver(context);
    std::lock_guard lock(delivered_mutex_);
    delivered.push_back(context.partition);
  }
  void progress(const policy::PolicyCounters&) {}
  void worker_lost(const std::string& what) { lost.push_back(what); }

 private:
  void spend(Phase phase, Where where, double seconds, StepSpans& spans) {
    const double start_s = runtime_.now_s();
    runtime_.sleep_until(start_s + seconds);
    spans.push_back({phase, where, start_s, runtime_.now_s()});
  }

  Runtime& runtime_;
  Costs costs_;
  std::mutex delivered_mutex_;  // workers deliver outside the pipeline's mutex
};

PipelineSettings one_gpu(std::uint32_t partitions, std::uint32_t workers, std::uint32_t slabs) {
  PipelineSettings settings;
  settings.policy.partitions = partitions;
  settings.policy.partition_host_bytes = 1;
  settings.policy.host_budget_bytes = 64;
  settings.policy.partitions_in_flight_max = slabs;
  settings.policy.staging = policy::Staging::pinned;
  settings.policy.pool_slabs = slabs;
  settings.policy.workers_per_gpu = workers;
  settings.synthesis_threads = 1;
  settings.run_name = "test";
  return settings;
}

const trace::Span& span_of(const trace::Trace& spans, std::uint32_t partition, Phase phase, int occurrence = 0) {
  for (const trace::Span& span : spans)
    if (span.partition == partition && span.phase == phase && occurrence-- == 0) return span;
  throw std::logic_error("no such span");
}

TEST(PipelineOnLogicalTime, OneSlabSerializesSynthesisBehindTheCopyAndNotBehindTheGpu) {
  LogicalRuntime logical;
  FixedCostWork work(logical, Costs{});
  PipelineSettings settings = one_gpu(3, 1, 1);
  settings.policy.partitions_in_flight_max = 2;  // so that the pool, not the in-flight limit, binds
  Pipeline pipeline(logical, work, settings);
  pipeline.run();
  const trace::Trace& spans = pipeline.spans();
  EXPECT_EQ(work.delivered, (std::vector<policy::PartitionId>{0, 1, 2}));
  // Partition 1 is admitted when partition 0's copy returns the slab: at 1.25, not when its
  // proof ends at 1.9.
  EXPECT_DOUBLE_EQ(span_of(spans, 0, Phase::h2d).end_s, 1.25);
  EXPECT_DOUBLE_EQ(span_of(spans, 1, Phase::synth).start_s, 1.25);
  EXPECT_DOUBLE_EQ(span_of(spans, 1, Phase::wait_pool).start_s, 1.0);
  EXPECT_DOUBLE_EQ(span_of(spans, 0, Phase::ntt).start_s, 1.35);  // after the split
  EXPECT_DOUBLE_EQ(span_of(spans, 0, Phase::verify).end_s, 1.9);
  EXPECT_DOUBLE_EQ(span_of(spans, 2, Phase::verify).end_s, 3 * 1.25 + 0.65);
  EXPECT_EQ(span_of(spans, 0, Phase::h2d).resource, "pcie0:h2d");
  EXPECT_EQ(span_of(spans, 0, Phase::ntt).resource, "gpu0:w0");
  EXPECT_EQ(span_of(spans, 0, Phase::verify).resource, "cpu:gpu0w0");
  EXPECT_EQ(work.staged_alive, 0);
}

TEST(PipelineOnLogicalTime, TwoWorkersOverlapOneCopyWithTheOthersKernelsNeverTwoKernels) {
  LogicalRuntime logical;
  FixedCostWork work(logical, Costs{.synth_s = 0.1, .copy_s = 0.3, .split_s = 0, .kernel_s = 0.5, .verify_s = 0});
  PipelineSettings settings = one_gpu(6, 2, 4);
  settings.synthesis_threads = 4;
  Pipeline pipeline(logical, work, settings);
  pipeline.run();
  std::vector<std::pair<double, double>> kernels;
  bool copy_overlaps_kernel = false;
  for (const trace::Span& span : pipeline.spans())
    if (span.phase == Phase::ntt) kernels.emplace_back(span.start_s, span.end_s);
  std::ranges::sort(kernels);
  for (std::size_t i = 1; i < kernels.size(); ++i) EXPECT_LE(kernels[i - 1].second, kernels[i].first + 1e-12);
  for (const trace::Span& span : pipeline.spans())
    if (span.phase == Phase::h2d)
      for (const auto& [start_s, end_s] : kernels) copy_overlaps_kernel |= span.start_s < end_s && start_s < span.end_s;
  EXPECT_TRUE(copy_overlaps_kernel);
  EXPECT_EQ(kernels.size(), 6u);
  // The GPU is the bottleneck: six kernels back to back after the first copy.
  EXPECT_NEAR(kernels.back().second, 0.1 + 0.3 + 6 * 0.5, 1e-9);
}

TEST(PipelineOnLogicalTime, AFailingStepIsChargedAndRetriedUntilTheLimitThenReported) {
  LogicalRuntime logical;
  FixedCostWork work(logical, Costs{});
  work.fail_compute = [](const Context& context) { return context.partition == 1; };
  PipelineSettings settings = one_gpu(3, 1, 2);
  settings.policy.retry_limit = 2;
  Pipeline pipeline(logical, work, settings);
  pipeline.run();
  EXPECT_EQ(pipeline.policy().outcome(1), policy::PartitionOutcome::failed);
  EXPECT_EQ(pipeline.failed_attempts()[1], 3u);
  EXPECT_EQ(pipeline.last_errors()[1], "kernel error");
  for (std::uint32_t attempt = 0; attempt < 3; ++attempt) {
    const trace::Span& kernel = span_of(pipeline.spans(), 1, Phase::ntt, int(attempt));
    EXPECT_EQ(kernel.attempt, attempt);
    EXPECT_EQ(kernel.worker, 0u);
    EXPECT_EQ(span_of(pipeline.spans(), 1, Phase::synth, int(attempt)).attempt, attempt);
    EXPECT_FALSE(span_of(pipeline.spans(), 1, Phase::synth, int(attempt)).worker);
  }
  EXPECT_EQ(work.delivered, (std::vector<policy::PartitionId>{0, 2}));
  EXPECT_EQ(work.staged_alive, 0);
}

TEST(PipelineOnLogicalTime, ALostWorkersPartitionGoesToTheOtherWorkerUncharged) {
  LogicalRuntime logical;
  FixedCostWork work(logical, Costs{});
  work.lose_on_copy = [](const Context& context) { return context.worker == 0; };
  Pipeline pipeline(logical, work, one_gpu(3, 2, 2));
  pipeline.run();
  EXPECT_EQ(pipeline.policy().counters().proved, 3u);
  EXPECT_EQ(pipeline.policy().counters().failed_attempts, 0u);
  ASSERT_EQ(work.lost.size(), 1u);
  EXPECT_EQ(work.lost[0], "worker 0 (gpu0:w0): device gone");
  for (const trace::Span& span : pipeline.spans()) {
    if (span.phase == Phase::ntt) {
      EXPECT_EQ(span.resource, "gpu0:w1");
    }
  }
}

TEST(PipelineOnLogicalTime, AScheduledDeathDuringACopyWaitsForTheCopysEnd) {
  LogicalRuntime logical;
  FixedCostWork work(logical, Costs{});
  PipelineSettings settings = one_gpu(2, 2, 2);
  settings.worker_death_s = {1.1};  // worker 0 copies partition 0 from 1 to 1.25
  Pipeline pipeline(logical, work, settings);
  pipeline.run();
  EXPECT_EQ(pipeline.policy().counters().proved, 2u);
  ASSERT_EQ(pipeline.workers_lost().size(), 1u);
  EXPECT_EQ(pipeline.workers_lost()[0], "worker 0 (gpu0:w0): scheduled death");
  // The copy finished reading its slab, then partition 0 was synthesized again for worker 1.
  EXPECT_DOUBLE_EQ(span_of(pipeline.spans(), 0, Phase::h2d).end_s, 1.25);
  EXPECT_EQ(span_of(pipeline.spans(), 0, Phase::ntt).resource, "gpu0:w1");
  EXPECT_EQ(work.staged_alive, 0);
}

TEST(PipelineOnLogicalTime, AProofThatCannotBeDeliveredEndsTheJobWithItsError) {
  LogicalRuntime logical;
  FixedCostWork work(logical, Costs{});
  work.on_deliver = [](const Context& context) {
    if (context.partition == 1) throw std::runtime_error("disk full");
  };
  Pipeline pipeline(logical, work, one_gpu(4, 1, 1));
  EXPECT_THROW(
      {
        try {
          pipeline.run();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "disk full");
          throw;
        }
      },
      std::runtime_error);
}

TEST(PipelineOnThreads, EveryPartitionIsProvedOnceAndAGpusSectionsNeverOverlap) {
  ThreadRuntime threads(ThreadRuntime::Clock::now());
  FixedCostWork work(threads, Costs{.synth_s = 0.004, .copy_s = 0.001, .split_s = 0.001, .kernel_s = 0.003, .verify_s = 0.001});
  PipelineSettings settings = one_gpu(24, 3, 3);
  settings.policy.gpus = 2;
  settings.synthesis_threads = 4;
  settings.policy.partitions_in_flight_max = 6;
  Pipeline pipeline(threads, work, settings);
  pipeline.run();
  std::multiset<policy::PartitionId> delivered(work.delivered.begin(), work.delivered.end());
  EXPECT_EQ(delivered.size(), 24u);
  for (policy::PartitionId p = 0; p < 24; ++p) EXPECT_EQ(delivered.count(p), 1u) << p;
  std::map<std::string, std::vector<std::pair<double, double>>> kernels_by_gpu;
  for (const trace::Span& span : pipeline.spans())
    if (span.phase == Phase::ntt) kernels_by_gpu[trace::gpu_of_resource(span.resource)].emplace_back(span.start_s, span.end_s);
  for (auto& [gpu, kernels] : kernels_by_gpu) {
    std::ranges::sort(kernels);
    for (std::size_t i = 1; i < kernels.size(); ++i) EXPECT_LE(kernels[i - 1].second, kernels[i].first) << gpu;
  }
  EXPECT_EQ(work.staged_alive, 0);
}

}  // namespace
}  // namespace zkpipe::runtime
