// Contract: Pipeline is zkpipe's one proving choreography, written once and run by the engine (real
// threads, real or fake devices), the SimGrid model (actors, calibrated costs) and the property
// tests (logical time). It owns who waits for what: synthesis threads ask the shared
// policy::SchedulingPolicy for a partition and synthesize it into its backing; GPU workers take
// synthesized partitions, copy them to their GPU, split the witness on the host, hold their GPU's
// compute section for the kernels, conclude (assembly outside the section, verification) and
// deliver; failed attempts are retried, lost workers retired, scheduled worker deaths applied.
// Every step is a span of the shared trace schema, recorded here with its partition and resource.
//
// It is generic over two things:
// - `Runtime`, the clock and the waiting: `Mutex` (guards the pipeline's state; a no-op where
//   actors run cooperatively), `WaitQueue` (FIFO waits: wait(lock), notify_one() -> whether one
//   was woken, notify_all()), `Section` (a FIFO BasicLockable: a GPU's compute section), now_s(),
//   sleep_until(s), and run(actors, daemons), which runs the actors to their end (daemons stop
//   when they have) and returns the first exception an actor let escape.
// - `Work`, what each step does: real memory, copies and kernels, or their costs. Its `Staged`
//   holds an admitted partition's host memory until the copy, `Attempt` what a worker keeps for
//   one attempt after it; each step returns a Step (ok, failed: retried, lost: the worker's device
//   is gone) and appends what it did to `spans` as StepSpans (phase, times, where, bytes, items).
//   Steps:
//     Step synthesize(uint32_t thread, const policy::SynthesisGrant&, Staged&, StepSpans&)
//     void check_handoff(const Context&, const Staged&)        (throws on a broken invariant)
//     Step copy_in(const Context&, Staged&&, Attempt&, StepSpans&)  (frees the staged memory)
//     Step split(const Context&, Attempt&, StepSpans&)         (host work before the section)
//     Step compute(const Context&, Attempt&, StepSpans&)       (inside the GPU's compute section)
//     Step conclude(const Context&, Attempt&, StepSpans&)      (after it: assembly, verification)
//     void deliver(const Context&, Attempt&)                   (the proof out; throws: job ends)
//     void progress(const policy::PolicyCounters&)             (after each ending or failure)
//     void worker_lost(const std::string& what)                (a worker retired, and why)
//   A Context names the attempt and says whether its worker is still alive, for work that a
//   worker death (a scheduled fault) cuts short between kernels.
//
// Promises (checked by tests/engine, tests/model and tests/properties on all three runtimes):
// every decision is the policy's; a GPU's compute sections never overlap; a partition's memory is
// freed before the policy hears that it is; each partition is delivered at most once; a failed
// step is charged to the partition's retry limit, a lost worker's attempt is not; the pipeline
// returns when every partition has ended (or rethrows the first fatal error).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "policy/scheduling_policy.hpp"
#include "trace/invariants.hpp"
#include "trace/trace.hpp"

namespace zkpipe::runtime {

enum class StepStatus { ok, failed, lost };

struct Step {
  StepStatus status = StepStatus::ok;
  std::string error;  // what failed, for failed and lost
  static Step ok() { return {}; }
  static Step failed(std::string error) { return {StepStatus::failed, std::move(error)}; }
  static Step lost(std::string error) { return {StepStatus::lost, std::move(error)}; }
};

// Where a step's span was busy: a synthesis thread's cores, the worker's GPU link, its GPU, or the
// worker's own host thread.
enum class Where { synthesis, link, gpu, host };

struct StepSpan {
  trace::Phase phase;
  Where where;
  double start_s = 0, end_s = 0;
  std::uint64_t bytes = 0, items = 0;
};
using StepSpans = std::vector<StepSpan>;

struct PipelineSettings {
  policy::PolicySettings policy;
  std::uint32_t synthesis_threads = 1;
  // Worker i dies at worker_death_s[i] (a scheduled fault): at once if idle or computing, at the
  // end of its copy if copying (the policy must not reissue a slab that a copy still reads).
  std::vector<double> worker_death_s{};
  // Measuring synthesis alone: workers drop synthesized partitions where they would copy them.
  bool synthesis_alone = false;
  std::string run_name;
  trace::Source source = trace::Source::simulated;
};

// What trace::check_invariants expects of a run of the pipeline under `policy`: its partitions,
// the outcomes it reported, the budget, the in-flight limit and, where every copy was staged
// pinned, the pools' slabs.
inline trace::RunExpectations run_expectations(const policy::PolicySettings& policy, std::uint32_t proved,
                                               std::uint32_t failed, bool staged_pinned) {
  return {policy.partitions, proved, failed, policy.host_budget_bytes, policy.partitions_in_flight_max,
          staged_pinned ? std::optional(policy.pool_slabs) : std::nullopt, staged_pinned ? policy.pools() : 1u};
}

// What a step knows of its attempt.
struct Context {
  policy::PartitionId partition = 0;
  std::uint32_t attempt = 0;
  policy::WorkerId worker = 0;
  std::uint32_t gpu = 0;
  policy::Backing backing;
  const policy::SchedulingPolicy* policy = nullptr;
  // Whether the worker still lives: only a scheduled death ends it mid-step, on the cooperative
  // runtimes, so work reads it between kernels without the pipeline's mutex.
  bool alive() const { return policy->worker_alive(worker); }
};

template <class Runtime, class Work>
class Pipeline {
 public:
  using Staged = typename Work::Staged;
  using Attempt = typename Work::Attempt;

  Pipeline(Runtime& runtime, Work& work, PipelineSettings settings)
      : runtime_(runtime),
        work_(work),
        settings_(std::move(settings)),
        policy_(settings_.policy),
        gpu_work_ready_(settings_.policy.pools()),
        ready_(settings_.policy.partitions),
        failed_attempts_(settings_.policy.partitions, 0),
        last_error_(settings_.policy.partitions),
        delivered_(settings_.policy.partitions, false),
        copying_(workers(), false),
        dies_after_copy_(workers(), false) {
    for (std::uint32_t gpu = 0; gpu < settings_.policy.gpus; ++gpu) sections_.push_back(std::make_unique<typename Runtime::Section>());
    for (std::uint32_t t = 0; t < settings_.synthesis_threads; ++t) resources_.synthesis.push_back(fmt::format("cpu:{}", t));
    for (policy::WorkerId w = 0; w < workers(); ++w) {
      const std::uint32_t gpu = gpu_of(w), index = w % settings_.policy.workers_per_gpu;
      resources_.gpu.push_back(fmt::format("gpu{}:w{}", gpu, index));
      resources_.host.push_back(fmt::format("cpu:gpu{}w{}", gpu, index));
    }
    for (std::uint32_t gpu = 0; gpu < settings_.policy.gpus; ++gpu) resources_.link.push_back(fmt::format("pcie{}:h2d", gpu));
  }

  // The pinned pool could not be had: staging is pageable for the whole job.
  void pinned_allocation_failed() { policy_.pinned_allocation_failed(); }

  // Runs the job to its end; rethrows the first fatal error (a broken invariant, a proof that
  // could not be delivered).
  void run() {
    std::vector<std::function<void()>> actors, daemons;
    for (std::uint32_t t = 0; t < settings_.synthesis_threads; ++t)
      actors.emplace_back([this, t] { guarded([&] { synthesis_thread(t); }); });
    for (policy::WorkerId w = 0; w < workers(); ++w) actors.emplace_back([this, w] { guarded([&] { gpu_worker(w); }); });
    for (std::size_t w = 0; w < settings_.worker_death_s.size() && w < workers(); ++w)
      daemons.emplace_back([this, w] { guarded([&] { scheduled_death(policy::WorkerId(w), settings_.worker_death_s[w]); }); });
    runtime_.run(std::move(actors), std::move(daemons));
    if (fatal_) std::rethrow_exception(fatal_);
    if (!policy_.finished()) throw std::logic_error("pipeline: every actor stopped before every partition ended");
  }

  const policy::SchedulingPolicy& policy() const { return policy_; }
  trace::Trace& spans() { return spans_; }
  const std::vector<std::uint32_t>& failed_attempts() const { return failed_attempts_; }
  // The last error of each partition ("" where none was seen).
  const std::vector<std::string>& last_errors() const { return last_error_; }
  const std::vector<std::string>& workers_lost() const { return workers_lost_; }

 private:
  using Lock = std::unique_lock<typename Runtime::Mutex>;

  policy::WorkerId workers() const { return settings_.policy.gpus * settings_.policy.workers_per_gpu; }
  std::uint32_t gpu_of(policy::WorkerId worker) const { return worker / settings_.policy.workers_per_gpu; }
  typename Runtime::WaitQueue& gpu_work_ready_on(std::uint32_t gpu) { return gpu_work_ready_[gpu_work_ready_.size() > 1 ? gpu : 0]; }

  // An exception escaping an actor ends the job: every waiter is woken to stop, and run()
  // rethrows the first one.
  template <class Body>
  void guarded(Body&& body) {
    try {
      body();
    } catch (const std::exception&) {
      Lock lock(mutex_);
      if (!fatal_) fatal_ = std::current_exception();
      wake_everyone();
    }
  }
  bool stopping() const { return fatal_ || policy_.finished(); }

  void wake_everyone() {
    synthesis_may_start_.notify_all();
    for (auto& queue : gpu_work_ready_) queue.notify_all();
  }

  // Waiters are woken only by events that can unblock them, one at a time where one event unblocks
  // one waiter. partition_ready: a worker may take it (one bound to a GPU wakes a worker of that
  // GPU; one bound to none, a worker of each queue); synthesis_may_resume: staging was released or
  // a partition requeued, so one more synthesis may start; proved: nothing new unless the job
  // ended; worker_died: anything may have changed.
  enum class Event { partition_ready, synthesis_may_resume, proved, worker_died };
  void announce(Event event, std::optional<std::uint32_t> bound_gpu = std::nullopt) {
    if (stopping() || event == Event::worker_died) {
      wake_everyone();
    } else if (event == Event::partition_ready) {
      if (bound_gpu) {
        gpu_work_ready_on(*bound_gpu).notify_one();
      } else {
        for (auto& queue : gpu_work_ready_) queue.notify_one();
      }
    } else if (event == Event::synthesis_may_resume) {
      synthesis_may_start_.notify_one();
    }
  }

  const std::string& resource(Where where, std::uint32_t thread_or_worker) const {
    switch (where) {
      case Where::synthesis: return resources_.synthesis[thread_or_worker];
      case Where::link: return resources_.link[gpu_of(thread_or_worker)];
      case Where::gpu: return resources_.gpu[thread_or_worker];
      case Where::host: break;
    }
    return resources_.host[thread_or_worker];
  }
  // Under the mutex. A synthesis thread's spans name no worker.
  void record(policy::PartitionId partition, std::uint32_t attempt, std::uint32_t thread_or_worker, const StepSpans& steps) {
    for (const StepSpan& step : steps)
      spans_.push_back({settings_.run_name, settings_.source, partition, step.phase, resource(step.where, thread_or_worker),
                        step.start_s, step.end_s, step.bytes, step.items, attempt,
                        step.where == Where::synthesis ? std::nullopt : std::optional(thread_or_worker)});
  }

  // Under the mutex: the attempt failed and is charged to the partition's retry limit.
  void attempt_failed(policy::PartitionId partition, std::string error) {
    ++failed_attempts_[partition];
    last_error_[partition] = std::move(error);
    policy_.attempt_failed(partition);
    work_.progress(policy_.counters());
    announce(Event::synthesis_may_resume);
  }

  // Under the mutex: the worker's device is gone; its attempt goes to the others, uncharged.
  void lose_worker(policy::WorkerId worker, std::optional<policy::PartitionId> partition, const std::string& error) {
    workers_lost_.push_back(fmt::format("worker {} ({}): {}", worker, resources_.gpu[worker], error));
    if (partition) last_error_[*partition] = error;
    work_.worker_lost(workers_lost_.back());
    policy_.worker_died(worker);
    for (policy::PartitionId p = 0; p < ready_.size(); ++p)
      if (ready_[p] && !policy_.waiting_for_gpu(p)) ready_[p].reset();
    work_.progress(policy_.counters());
    announce(Event::worker_died);
  }

  void synthesis_thread(std::uint32_t thread) {
    StepSpans steps;
    while (true) {
      policy::SynthesisGrant grant;
      {
        Lock lock(mutex_);
        const double asked_s = runtime_.now_s();
        std::optional<policy::WaitReason> blocked_on;
        while (true) {
          if (fatal_) return;
          const policy::SynthesisDecision decision = policy_.request_synthesis();
          if (const auto* granted = std::get_if<policy::SynthesisGrant>(&decision)) {
            grant = *granted;
            break;
          }
          const auto reason = std::get<policy::WaitReason>(decision);
          if (reason == policy::WaitReason::job_finished) return;
          if (reason == policy::WaitReason::budget || reason == policy::WaitReason::pool) blocked_on = reason;
          synthesis_may_start_.wait(lock);
        }
        if (blocked_on && runtime_.now_s() > asked_s)
          record(grant.partition, grant.attempt, thread,
                 {{*blocked_on == policy::WaitReason::pool ? trace::Phase::wait_pool : trace::Phase::wait_budget,
                   Where::synthesis, asked_s, runtime_.now_s()}});
      }
      steps.clear();
      std::optional<Staged> staged(std::in_place);
      const Step synthesized = work_.synthesize(thread, grant, *staged, steps);
      if (synthesized.status != StepStatus::ok) staged.reset();  // freed before the policy hears of it
      Lock lock(mutex_);
      record(grant.partition, grant.attempt, thread, steps);
      if (synthesized.status != StepStatus::ok) {
        attempt_failed(grant.partition, "synthesis: " + synthesized.error);
        continue;
      }
      policy_.synthesis_finished(grant.partition);
      if (policy_.waiting_for_gpu(grant.partition)) {
        ready_[grant.partition] = std::move(staged);
        announce(Event::partition_ready, grant.backing.gpu);
      } else {  // taken back: no live worker may run it, so it was requeued (or failed)
        staged.reset();
        announce(Event::synthesis_may_resume);
      }
    }
  }

  // Waits for an assignment; nullopt: the worker stops.
  std::optional<std::pair<policy::GpuAssignment, Staged>> next_assignment(policy::WorkerId worker) {
    Lock lock(mutex_);
    while (true) {
      if (stopping() || !policy_.worker_alive(worker)) return std::nullopt;
      if (auto next = policy_.request_gpu_work(worker)) {
        std::optional<Staged>& staged = ready_[next->partition];
        if (!staged) throw std::logic_error(fmt::format("pipeline: partition {} assigned but not synthesized", next->partition));
        std::pair<policy::GpuAssignment, Staged> taken{*next, std::move(*staged)};
        staged.reset();
        copying_[worker] = true;
        return taken;
      }
      gpu_work_ready_on(gpu_of(worker)).wait(lock);
    }
  }

  // The outcome of a step after its spans are recorded, under the mutex: whether the attempt goes
  // on. A failed step is charged to the partition, a lost worker stops; a worker that died
  // meanwhile (scheduled) stops without a word, the policy having requeued its work.
  bool goes_on(const Context& context, const Step& step, bool& worker_stops) {
    worker_stops = !policy_.worker_alive(context.worker);
    if (worker_stops) return false;
    if (step.status == StepStatus::lost) {
      lose_worker(context.worker, context.partition, step.error);
      worker_stops = true;
      return false;
    }
    if (step.status == StepStatus::failed) {
      attempt_failed(context.partition, step.error);
      return false;
    }
    return true;
  }

  void gpu_worker(policy::WorkerId worker) {
    StepSpans steps;
    while (auto next = next_assignment(worker)) {
      auto& [assignment, staged] = *next;
      const Context context{assignment.partition, assignment.attempt, worker, gpu_of(worker), assignment.backing, &policy_};
      work_.check_handoff(context, staged);
      bool worker_stops = false;
      if (settings_.synthesis_alone) {
        discard(context, staged);
        continue;
      }
      Attempt attempt;
      steps.clear();
      const Step copied = work_.copy_in(context, std::move(staged), attempt, steps);
      {
        Lock lock(mutex_);
        record(context.partition, context.attempt, worker, steps);
        copying_[worker] = false;
        if (dies_after_copy_[worker]) return lose_worker(worker, std::nullopt, "scheduled death");
        if (!goes_on(context, copied, worker_stops)) {
          if (worker_stops) return;
          continue;
        }
        policy_.copy_finished(context.partition);
        announce(Event::synthesis_may_resume);
      }
      if (!run_step(context, worker, steps, worker_stops, [&] { return work_.split(context, attempt, steps); }) ||
          !run_step(context, worker, steps, worker_stops, [&] {
            std::lock_guard section(*sections_[context.gpu]);
            return work_.compute(context, attempt, steps);
          }) ||
          !run_step(context, worker, steps, worker_stops, [&] { return work_.conclude(context, attempt, steps); })) {
        if (worker_stops) return;
        continue;
      }
      deliver(context, attempt);
    }
  }

  // Runs one step of the attempt and records it; false: the attempt stops (see goes_on).
  template <class Body>
  bool run_step(const Context& context, policy::WorkerId worker, StepSpans& steps, bool& worker_stops, Body&& body) {
    steps.clear();
    const Step step = body();
    Lock lock(mutex_);
    record(context.partition, context.attempt, worker, steps);
    return goes_on(context, step, worker_stops);
  }

  void deliver(const Context& context, Attempt& attempt) {
    {
      Lock lock(mutex_);
      if (delivered_[context.partition])
        throw std::logic_error(fmt::format("pipeline: partition {} proved twice", context.partition));
      delivered_[context.partition] = true;
    }
    work_.deliver(context, attempt);
    Lock lock(mutex_);
    policy_.attempt_succeeded(context.partition);
    work_.progress(policy_.counters());
    announce(Event::proved);
  }

  // Synthesis alone: a synthesized partition is dropped where a worker would copy it.
  void discard(const Context& context, Staged& staged) {
    staged = Staged{};
    Lock lock(mutex_);
    copying_[context.worker] = false;
    policy_.copy_finished(context.partition);
    policy_.attempt_succeeded(context.partition);
    work_.progress(policy_.counters());
    announce(Event::synthesis_may_resume);
    announce(Event::proved);
  }

  void scheduled_death(policy::WorkerId worker, double death_s) {
    runtime_.sleep_until(death_s);
    Lock lock(mutex_);
    if (!policy_.worker_alive(worker) || policy_.finished()) return;
    if (copying_[worker]) {
      dies_after_copy_[worker] = true;
    } else {
      lose_worker(worker, std::nullopt, "scheduled death");
    }
  }

  Runtime& runtime_;
  Work& work_;
  const PipelineSettings settings_;
  typename Runtime::Mutex mutex_;  // guards everything below but the compute sections
  policy::SchedulingPolicy policy_;
  typename Runtime::WaitQueue synthesis_may_start_;
  // Idle workers: one queue with one pinned pool per host; with one pool per GPU, one per GPU, so
  // that a partition bound to a GPU wakes only a worker that may take it.
  std::vector<typename Runtime::WaitQueue> gpu_work_ready_;
  std::vector<std::unique_ptr<typename Runtime::Section>> sections_;  // one per GPU
  std::vector<std::optional<Staged>> ready_;  // by partition: synthesized, waiting for a worker
  std::vector<std::uint32_t> failed_attempts_;
  std::vector<std::string> last_error_;
  std::vector<std::string> workers_lost_;
  std::vector<bool> delivered_;
  std::vector<bool> copying_;  // by worker: from assignment to the end of its copy
  std::vector<bool> dies_after_copy_;
  trace::Trace spans_;
  std::exception_ptr fatal_;
  struct {
    std::vector<std::string> synthesis, link, gpu, host;
  } resources_;
};

}  // namespace zkpipe::runtime
