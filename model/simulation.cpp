#include "simulation.hpp"

#include <algorithm>
#include <deque>
#include <charconv>
#include <memory>
#include <mutex>  // std::unique_lock on the per-GPU compute section
#include <optional>
#include <queue>
#include <random>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/simix.hpp>
#include <xbt/log.h>

#include "child_process.hpp"
#include "trace/trace_csv.hpp"

namespace sg4 = simgrid::s4u;

namespace zkpipe::model {

namespace {

using trace::Phase;

// Items a GPU phase works on: the domain for the NTTs and H, the scalars that are neither 0 nor 1
// for the tail MSM, the 1-scalars for batch addition, the non-zero scalars for whole MSMs.
std::uint64_t phase_items(Phase phase, const Workload& workload) {
  const double constraints = double(workload.constraints_per_partition);
  switch (phase) {
    case Phase::ntt:
    case Phase::msm_h: return workload.constraints_per_partition;
    case Phase::batch_add: return std::uint64_t(constraints * workload.one_scalar_share);
    case Phase::tail_msm:
      return std::uint64_t(constraints * (1 - workload.zero_scalar_share - workload.one_scalar_share));
    default: return std::uint64_t(constraints * (1 - workload.zero_scalar_share));
  }
}

// How much longer than the mean this attempt's synthesis takes: one of `factors`, drawn
// uniformly as a pure function of (seed, partition, attempt), so that every sweep point draws
// the same factor for the same partition (std::mt19937_64 and std::seed_seq are specified
// exactly by the standard: the same draws on every platform).
double synthesis_time_factor(std::uint64_t seed, std::uint32_t partition, std::uint32_t attempt,
                             const std::vector<double>& factors) {
  if (factors.empty()) return 1;
  std::seed_seq keys{std::uint32_t(seed), std::uint32_t(seed >> 32), partition, attempt};
  std::mt19937_64 bits(keys);
  return factors[std::size_t(double(bits() >> 11) * 0x1.0p-53 * double(factors.size()))];
}

// The rate a copy chunk runs at: the path's rate at the memory load of `synthesizing` threads,
// divided by `slowdown` (a slow-transfer fault).
double copy_rate_gbps(const Scenario& scenario, const H2dPathCost& path, std::uint32_t synthesizing, double slowdown) {
  return path.rate_gbps(scenario.hardware.pcie_h2d_gbps, synthesizing * scenario.calibration.synth_memory_load_threads) /
         slowdown;
}

// Every rate a copy chunk can run at, ascending, without repeats.
std::vector<double> possible_copy_rates_gbps(const Scenario& scenario) {
  std::vector<double> rates;
  for (const H2dPathCost* path : {&scenario.calibration.h2d_pinned, &scenario.calibration.h2d_pageable})
    for (std::uint32_t synthesizing = 0; synthesizing <= scenario.policy.synthesis_threads; ++synthesizing)
      for (const double slowdown : {1.0, scenario.faults.slow_transfer_factor})
        rates.push_back(copy_rate_gbps(scenario, *path, synthesizing, slowdown));
  std::ranges::sort(rates);
  rates.erase(std::unique(rates.begin(), rates.end()), rates.end());
  return rates;
}

// A host-to-device copy engine, an endpoint host of its own. Its chunks run one at a time, each
// at its path's rate under the memory load at its start.
// - Where its copies cross links that copies can fill (the memory bus, the GPU's PCIe link shared
//   by the GPU's engines), a chunk is a communication to `endpoint` over
//   [memory bus, `link`, PCIe link], `link` set to the chunk's rate.
// - Otherwise a chunk is a lone transfer at its rate, and runs as an execution of one flop per
//   byte on `endpoint`, whose pstates are the possible rates: the same times, byte for byte,
//   and 9 % less SimGrid work per chunk than a communication (callgrind, a bare loop of either:
//   10.8k vs 11.8k instructions; no route, no network action).
struct CopyEngine {
  sg4::Host* endpoint = nullptr;
  sg4::Link* link = nullptr;  // nullptr: chunks execute on `endpoint`
  double rate_gbps = 0;       // the chunks' rate now
  bool busy = false;
};

// Actors blocked until an event: FIFO, so wake-ups are deterministic. SimGrid runs actors
// cooperatively on one OS thread and switches only at simcalls, so checking the policy and then
// waiting here cannot miss a wake-up, and no mutex is needed around policy calls.
class WaitQueue {
 public:
  void wait() {
    waiters_.push_back(sg4::Actor::self());
    sg4::this_actor::suspend();
  }
  // Whether there was a waiter to wake.
  bool notify_one() {
    if (waiters_.empty()) return false;
    sg4::Actor* next = waiters_.front();
    waiters_.pop_front();
    next->resume();
    return true;
  }
  // resume() is a simcall: the woken actors may run, and wait again, before it returns, so
  // notify_all wakes the waiters of this moment only.
  void notify_all() {
    std::deque<sg4::Actor*> waking;
    waking.swap(waiters_);
    for (sg4::Actor* actor : waking) actor->resume();
  }

 private:
  std::deque<sg4::Actor*> waiters_;
};

// A FIFO semaphore (a mutex with one unit; BasicLockable, for std::unique_lock): a release hands
// the unit to the longest waiter, as SimGrid's Semaphore and Mutex do, but taking a free unit and
// releasing one nobody waits for cost no simcall (SimGrid's cost one or two each: 2.5 % of the
// seed scenario's instructions).
class FifoSemaphore {
 public:
  explicit FifoSemaphore(std::uint32_t units) : free_units_(units) {}
  void lock() {
    if (free_units_ > 0) {
      --free_units_;
    } else {
      waiters_.wait();  // resumed by unlock(), which hands its unit over
    }
  }
  void unlock() {
    if (!waiters_.notify_one()) ++free_units_;
  }

 private:
  std::uint32_t free_units_;
  WaitQueue waiters_;
};

struct Gpu {
  sg4::Host* host = nullptr;
  std::vector<CopyEngine> copy_engines;
  std::unique_ptr<FifoSemaphore> free_copy_engines;  // copies on one direction are served in order
  std::unique_ptr<FifoSemaphore> compute;            // one worker's kernels at a time on a GPU
  std::string pcie_resource;
};

// One actor's waits for the activities it starts, one at a time. Not with Activity::wait(): in
// SimGrid 3.32 that adds a sleep action to the waiting actor's CPU (to notice host failures, which
// this model never injects), so every wait for a copy chunk would re-solve the CPU system once
// more. wait_any over the one activity blocks on it alone; same timeline, byte for byte. The
// one-element vector that wait_any takes is kept, not built for every wait (callgrind, seed
// scenario: -1.6 % instructions); wait_any reads it again when the actor resumes, so every actor
// has its own.
class ActivityWaiter {
 public:
  void wait_until_done(sg4::ActivityPtr activity) {
    waiting_.front() = std::move(activity);
    sg4::Activity::wait_any(waiting_);
    waiting_.front() = nullptr;
  }

  // Runs `flops` on `host`, first set to `pstate` where one is given, and waits for it.
  // Exec::set_flops_amount, set_host and start are one simcall (a switch to SimGrid's maestro and
  // back) each from an actor; from one simcall they run directly in maestro (callgrind, seed
  // scenario: 13.4k -> 13.0k instructions per activity).
  void execute_on(sg4::Host* host, double flops, std::optional<unsigned long> pstate = std::nullopt) {
    const sg4::ExecPtr exec = sg4::Exec::init();
    simgrid::kernel::actor::simcall_answered([&exec, host, flops, pstate] {
      if (pstate) host->set_pstate(*pstate);
      exec->set_flops_amount(flops)->set_host(host)->start();
    });
    wait_until_done(exec);
  }

 private:
  std::vector<sg4::ActivityPtr> waiting_{1};
};

// The CPU host: synthesis threads and the workers' CPU work (witness split, compute-section host
// time, assembly, verification) share its cores. Synthesis threads slow each other (memory
// bandwidth, caches): with n synthesizing, a core runs at 1 / (1 + slowdown * (n - 1)); with more
// executions than cores, they share the cores equally. So every execution on the host, synthesis
// or not, runs at one rate:  speed(n) * min(1, cores / (n + worker executions)).
//
// Synthesis is not a SimGrid execution. All synthesizing threads run at that one rate, so the
// model keeps their progress as one number (the work a thread synthesizing since the start would
// have done) and arms one SimGrid kernel timer for the next end, re-armed when the rate changes.
// As SimGrid executions, the seed's 24 syntheses, alive for seconds of simulated time, were
// scanned and updated by SimGrid's CPU model at every event of the simulation and re-bounded at
// every pstate change (callgrind, seed scenario, instructions per activity: 18.2k -> 14.4k pinned,
// 15.9k -> 14.4k pageable; traces unchanged to the printed nanosecond).
// The workers' executions stay SimGrid executions on the host; its pstate table holds the rate for
// every (synthesizing, worker executions) pair, and it has a core per worker so that the pstate
// alone sets their rate.
class CpuHost {
 public:
  CpuHost(sg4::Host* host, std::uint32_t cores, double slowdown_per_extra_thread, std::uint32_t workers)
      : host_(host), cores_(cores), slowdown_per_extra_thread_(slowdown_per_extra_thread), workers_(workers) {}

  // The rate of each execution on the host, the pstate table's entries in pstate order.
  static std::vector<double> rates_by_pstate(std::uint32_t cores, double slowdown_per_extra_thread,
                                             std::uint32_t synthesis_threads, std::uint32_t workers) {
    std::vector<double> rates;
    for (std::uint32_t synthesizing = 0; synthesizing <= synthesis_threads; ++synthesizing)
      for (std::uint32_t executing = 0; executing <= workers; ++executing)
        rates.push_back(rate(cores, slowdown_per_extra_thread, synthesizing, executing));
    return rates;
  }

  sg4::Host* host() const { return host_; }
  std::uint32_t synthesizing() const { return synthesizing_; }

  // Blocks the calling actor for `core_seconds` of synthesis at the host's varying rate.
  void synthesize(double core_seconds) {
    if (core_seconds <= 0) return;
    advance_to_now();
    const double work_done_at_end = work_done_ + core_seconds;
    const bool ends_first = running_.empty() || work_done_at_end < running_.top().work_done_at_end;
    running_.push({work_done_at_end, next_sequence_++, sg4::Actor::self()});
    if (!set_load(synthesizing_ + 1, executing_) && ends_first) time_next_end();
    sg4::this_actor::suspend();  // resumed by finish_syntheses() when its work is done
  }

  // A worker's CPU work: a SimGrid execution on the host, counted in `activities`.
  void execute(ActivityWaiter& worker, double core_seconds, std::uint64_t& activities) {
    if (core_seconds <= 0) return;
    set_load(synthesizing_, executing_ + 1);
    worker.execute_on(host_, core_seconds);
    ++activities;
    set_load(synthesizing_, executing_ - 1);
  }

 private:
  struct Synthesis {
    double work_done_at_end;
    std::uint64_t sequence;  // ties end in start order
    sg4::Actor* thread;
    bool operator>(const Synthesis& other) const {
      return std::tie(work_done_at_end, sequence) > std::tie(other.work_done_at_end, other.sequence);
    }
  };

  static double rate(std::uint32_t cores, double slowdown_per_extra_thread, std::uint32_t synthesizing,
                     std::uint32_t executing) {
    const double core_speed = 1.0 / (1 + slowdown_per_extra_thread * double(std::max<std::uint32_t>(synthesizing, 1) - 1));
    const std::uint32_t sharing = synthesizing + executing;
    return sharing > cores ? core_speed * (double(cores) / double(sharing)) : core_speed;
  }

  void advance_to_now() {
    const double now_s = sg4::Engine::get_clock();
    work_done_ += rate_ * (now_s - work_done_at_s_);
    work_done_at_s_ = now_s;
  }

  // Synthesizing threads or worker executions changed. Where that changes the rate, for synthesis
  // and (through the pstate) for the workers' executions, the next synthesis end is re-timed and
  // set_load returns true.
  bool set_load(std::uint32_t synthesizing, std::uint32_t executing) {
    advance_to_now();
    synthesizing_ = synthesizing;
    executing_ = executing;
    const double new_rate = rate(cores_, slowdown_per_extra_thread_, synthesizing, executing);
    if (new_rate == rate_) return false;
    host_->set_pstate(int(synthesizing * (workers_ + 1) + executing));
    rate_ = new_rate;
    time_next_end();
    return true;
  }

  // Arms the timer for the end of the first synthesis of `running_` at the current rate.
  void time_next_end() {
    if (next_end_ != nullptr) next_end_->remove();
    next_end_ = nullptr;
    if (running_.empty()) return;
    next_end_ = simgrid::kernel::timer::Timer::set(
        sg4::Engine::get_clock() + std::max(0.0, running_.top().work_done_at_end - work_done_) / rate_,
        [this] { finish_syntheses(); });
  }

  // The timer's callback, run by SimGrid's maestro: the syntheses whose work is done end now.
  void finish_syntheses() {
    next_end_ = nullptr;
    advance_to_now();
    work_done_ = running_.top().work_done_at_end;  // the timer was set for exactly this much work
    std::vector<sg4::Actor*> ended;
    while (!running_.empty() && running_.top().work_done_at_end <= work_done_) {
      ended.push_back(running_.top().thread);
      running_.pop();
    }
    if (!set_load(synthesizing_ - std::uint32_t(ended.size()), executing_)) time_next_end();
    for (sg4::Actor* thread : ended) thread->resume();
  }

  sg4::Host* host_;
  std::uint32_t cores_;
  double slowdown_per_extra_thread_;
  std::uint32_t workers_;
  std::uint32_t synthesizing_ = 0;
  std::uint32_t executing_ = 0;  // workers' executions running on the host
  double rate_ = 1;              // of each execution on the host, as pstate 0
  double work_done_ = 0;         // core-seconds a thread synthesizing since the start would have done ...
  double work_done_at_s_ = 0;    // ... by this simulated time
  std::priority_queue<Synthesis, std::vector<Synthesis>, std::greater<>> running_;
  std::uint64_t next_sequence_ = 0;
  simgrid::kernel::timer::Timer* next_end_ = nullptr;  // when the first of `running_` ends
};

// Everything the actors share.
struct Simulation {
  explicit Simulation(const Scenario& s)
      : scenario(s),
        policy(s.policy_settings()),
        faults(s.fault_options()),
        staging_held_by_worker(s.hardware.gpus * s.policy.workers_per_gpu, false),
        dies_after_copy(staging_held_by_worker.size(), false),
        gpu_work_ready(s.policy_settings().pools()) {}

  const Scenario& scenario;
  policy::SchedulingPolicy policy;
  faults::FaultInjector faults;
  // A worker holds its partition's staging (slab or pageable a/b/c) from assignment to the end of
  // its copy; a worker that dies meanwhile dies when the copy ends, so the policy never reissues
  // a slab that a copy still reads.
  std::vector<bool> staging_held_by_worker;
  std::vector<bool> dies_after_copy;
  void worker_died(policy::WorkerId worker) {
    policy.worker_died(worker);
    announce(Event::worker_died);
  }
  // Waiters are woken only by events that can unblock them, one at a time where one event
  // unblocks one waiter (waking every actor on every event costs more than the simulation).
  WaitQueue synthesis_may_start;
  // Idle workers: all in one queue with one pinned pool per host; with one pool per GPU, in their
  // GPU's queue, so that a partition bound to a GPU wakes only a worker that may take it.
  std::vector<WaitQueue> gpu_work_ready;
  WaitQueue& gpu_work_ready_on(std::uint32_t gpu) { return gpu_work_ready[gpu_work_ready.size() > 1 ? gpu : 0]; }

  // partition_ready: a worker may take it; synthesis_may_resume: staging was released or a failed
  // partition was requeued, so one more synthesis may start; proved: nothing new unless the job
  // ended; worker_died: anything may have changed. A partition ready for the GPU it is bound to
  // (`bound_gpu`) wakes a worker of that GPU; one bound to none wakes a worker of each queue.
  enum class Event { partition_ready, synthesis_may_resume, proved, worker_died };
  void announce(Event event, std::optional<std::uint32_t> bound_gpu = std::nullopt) {
    if (policy.finished() || event == Event::worker_died) {
      synthesis_may_start.notify_all();
      for (WaitQueue& queue : gpu_work_ready) queue.notify_all();
    } else if (event == Event::partition_ready) {
      if (bound_gpu) {
        gpu_work_ready_on(*bound_gpu).notify_one();
      } else {
        for (WaitQueue& queue : gpu_work_ready) queue.notify_one();
      }
    } else if (event == Event::synthesis_may_resume) {
      synthesis_may_start.notify_one();
    }
  }

  std::unique_ptr<CpuHost> cpu;
  std::vector<Gpu> gpus;
  std::uint64_t activities = 0;
  std::vector<double> copy_rates_gbps = possible_copy_rates_gbps(scenario);
  trace::Trace spans;

  void record(std::uint32_t partition, Phase phase, std::string resource, double start_s,
              std::uint64_t bytes, std::uint64_t items) {
    spans.push_back({scenario.name, trace::Source::simulated, partition, phase, std::move(resource),
                     start_s, sg4::Engine::get_clock(), bytes, items});
  }

  void execute_on_gpu(ActivityWaiter& worker, const Gpu& gpu, double seconds) {
    if (seconds <= 0) return;
    worker.execute_on(gpu.host, seconds);
    ++activities;
  }
  void execute_on_cpu(ActivityWaiter& worker, double seconds) { cpu->execute(worker, seconds, activities); }

  // Copies `bytes` to a GPU in chunks on one copy engine; each chunk's rate follows the memory
  // load (threads synthesizing) at its start, divided by `slowdown` (a slow-transfer fault).
  void copy_to_gpu(ActivityWaiter& worker, CopyEngine& engine, std::uint64_t bytes, const H2dPathCost& path,
                   double slowdown = 1) {
    for (std::uint64_t sent = 0; sent < bytes;) {
      const std::uint64_t chunk = std::min(scenario.hardware.h2d_chunk_bytes, bytes - sent);
      const double rate_gbps = copy_rate_gbps(scenario, path, cpu->synthesizing(), slowdown);
      const bool rate_changed = rate_gbps != engine.rate_gbps;
      engine.rate_gbps = rate_gbps;
      if (engine.link == nullptr) {
        worker.execute_on(engine.endpoint, double(chunk),
                          rate_changed ? std::optional(copy_rate_pstate(rate_gbps)) : std::nullopt);
      } else {
        if (rate_changed) engine.link->set_bandwidth(rate_gbps * 1e9);
        worker.wait_until_done(sg4::Comm::sendto_async(cpu->host(), engine.endpoint, chunk));
      }
      ++activities;
      sent += chunk;
    }
  }

  // The pstate of an executing copy engine that runs at `rate_gbps`, one of `copy_rates_gbps`.
  unsigned long copy_rate_pstate(double rate_gbps) const {
    const auto rate = std::ranges::lower_bound(copy_rates_gbps, rate_gbps);
    if (rate == copy_rates_gbps.end() || *rate != rate_gbps)
      throw std::logic_error(fmt::format("copy rate {} GB/s is not one of the possible rates", rate_gbps));
    return static_cast<unsigned long>(rate - copy_rates_gbps.begin());
  }
};

void synthesis_thread(Simulation& sim, std::uint32_t thread) {
  const std::string resource = fmt::format("cpu:{}", thread);
  const Workload& workload = sim.scenario.workload;
  const Calibration& calibration = sim.scenario.calibration;
  while (true) {
    const double asked_s = sg4::Engine::get_clock();
    std::optional<policy::WaitReason> blocked_on;
    policy::SynthesisGrant grant;
    {
      while (true) {
        const policy::SynthesisDecision decision = sim.policy.request_synthesis();
        if (const auto* granted = std::get_if<policy::SynthesisGrant>(&decision)) {
          grant = *granted;
          break;
        }
        const policy::WaitReason reason = std::get<policy::WaitReason>(decision);
        if (reason == policy::WaitReason::job_finished) return;
        if (reason == policy::WaitReason::budget || reason == policy::WaitReason::pool) blocked_on = reason;
        sim.synthesis_may_start.wait();
      }
    }
    if (blocked_on && sg4::Engine::get_clock() > asked_s)
      sim.record(grant.partition, *blocked_on == policy::WaitReason::pool ? Phase::wait_pool : Phase::wait_budget,
                 resource, asked_s, 0, 0);

    const double start_s = sg4::Engine::get_clock();
    sim.cpu->synthesize(calibration.synth_core_s_per_mconstraint * double(workload.constraints_per_partition) / 1e6 *
                        synthesis_time_factor(sim.scenario.seed, grant.partition, grant.attempt,
                                              calibration.synth_time_factors) *
                        synthesis_share_factor(calibration.synth_parallel_fraction, sim.scenario.hardware.cores,
                                               sim.scenario.policy.synthesis_threads));
    sim.record(grant.partition, Phase::synth, resource, start_s, workload.partition_host_bytes(),
               workload.constraints_per_partition);
    sim.policy.synthesis_finished(grant.partition);
    if (sim.policy.waiting_for_gpu(grant.partition)) {
      sim.announce(Simulation::Event::partition_ready, grant.backing.gpu);
    } else {  // taken back: no live worker may run it, so it was requeued (or failed) and its slab freed
      sim.announce(Simulation::Event::synthesis_may_resume);
    }
  }
}

void gpu_worker(Simulation& sim, policy::WorkerId worker) {
  const Scenario& scenario = sim.scenario;
  const std::uint32_t gpu_index = worker / scenario.policy.workers_per_gpu;
  Gpu& gpu = sim.gpus[gpu_index];
  const std::string resource = fmt::format("gpu{}:w{}", gpu_index, worker % scenario.policy.workers_per_gpu);
  ActivityWaiter waiter;
  auto report = [&](Simulation::Event kind, auto&& event) {
    if (!sim.policy.worker_alive(worker)) return false;  // the policy already requeued the work
    event();
    sim.announce(kind);
    return true;
  };
  while (true) {
    policy::GpuAssignment assignment;
    {
      while (true) {
        if (sim.policy.finished() || !sim.policy.worker_alive(worker)) return;
        if (auto next = sim.policy.request_gpu_work(worker)) {
          assignment = *next;
          break;
        }
        sim.gpu_work_ready_on(gpu_index).wait();
      }
    }
    const std::uint32_t partition = assignment.partition;
    sim.staging_held_by_worker[worker] = true;
    const H2dPathCost& path = assignment.backing.staging == policy::Staging::pinned
                                  ? scenario.calibration.h2d_pinned : scenario.calibration.h2d_pageable;
    const faults::TransferFault transfer = sim.faults.transfer_fault(partition, assignment.attempt);
    gpu.free_copy_engines->lock();
    CopyEngine& engine = *std::ranges::find(gpu.copy_engines, false, &CopyEngine::busy);
    engine.busy = true;
    double start_s = sg4::Engine::get_clock();
    if (transfer == faults::TransferFault::stalled) {  // no progress until the watchdog gives up
      sg4::this_actor::sleep_for(scenario.faults.stalled_transfer_s);
      sim.record(partition, Phase::h2d, gpu.pcie_resource, start_s, 0, 0);
      engine.busy = false;
      gpu.free_copy_engines->unlock();
      sim.staging_held_by_worker[worker] = false;
      if (sim.dies_after_copy[worker]) return sim.worker_died(worker);
      if (!report(Simulation::Event::synthesis_may_resume, [&] { sim.policy.attempt_failed(partition); })) return;
      continue;
    }
    sim.copy_to_gpu(waiter, engine, scenario.workload.partition_host_bytes(), path,
                    transfer == faults::TransferFault::slow ? scenario.faults.slow_transfer_factor : 1);
    sim.record(partition, Phase::h2d, gpu.pcie_resource, start_s, scenario.workload.partition_host_bytes(),
               scenario.workload.constraints_per_partition);
    if (scenario.policy.srs_residency == SrsResidency::pinned_host && scenario.workload.srs_bytes > 0) {
      start_s = sg4::Engine::get_clock();
      sim.copy_to_gpu(waiter, engine, scenario.workload.srs_bytes, scenario.calibration.h2d_pinned);
      sim.record(partition, Phase::h2d, gpu.pcie_resource, start_s, scenario.workload.srs_bytes, 0);
    }
    engine.busy = false;
    gpu.free_copy_engines->unlock();
    sim.staging_held_by_worker[worker] = false;
    if (sim.dies_after_copy[worker] || sim.faults.worker_dies(worker, partition, assignment.attempt))
      return sim.worker_died(worker);
    if (!report(Simulation::Event::synthesis_may_resume, [&] { sim.policy.copy_finished(partition); })) return;

    const Calibration& calibration = scenario.calibration;
    sim.execute_on_cpu(waiter, calibration.witness_split_s);
    bool gpu_error = false, assembled = false;
    double assemble_start_s = 0;
    {
      std::unique_lock compute(*gpu.compute);
      bool first_kernel = true;
      for (const auto& [phase, cost] : calibration.gpu_phase_cost) {
        if (!sim.policy.worker_alive(worker)) break;  // a dead worker launches no more kernels
        const std::uint64_t items = phase_items(phase, scenario.workload);
        start_s = sg4::Engine::get_clock();
        sim.execute_on_gpu(waiter, gpu, cost.seconds(items));
        sim.record(partition, phase, resource, start_s, 0, items);
        if (first_kernel) sim.execute_on_cpu(waiter, calibration.compute_section_host_s);  // the GPU held, idle
        first_kernel = false;
      }
      if (calibration.assemble_in_compute_section && sim.policy.worker_alive(worker)) {
        gpu_error = sim.faults.gpu_error(partition, assignment.attempt);
        if (!gpu_error) {
          assemble_start_s = sg4::Engine::get_clock();
          sim.execute_on_cpu(waiter, calibration.assemble_s);
          assembled = true;
        }
      }
    }
    if (!sim.policy.worker_alive(worker)) return;  // died computing or assembling: the policy requeued the partition
    if (!calibration.assemble_in_compute_section) gpu_error = sim.faults.gpu_error(partition, assignment.attempt);
    if (gpu_error) {
      if (!report(Simulation::Event::synthesis_may_resume, [&] { sim.policy.attempt_failed(partition); })) return;
      continue;
    }
    if (!assembled) {
      assemble_start_s = sg4::Engine::get_clock();
      sim.execute_on_cpu(waiter, calibration.assemble_s);
      if (!sim.policy.worker_alive(worker)) return;  // the proof died with its worker; requeued
    }
    sim.record(partition, Phase::assemble, "cpu:assemble", assemble_start_s, 0, 0);
    if (calibration.verify_s > 0) {
      start_s = sg4::Engine::get_clock();
      sim.execute_on_cpu(waiter, calibration.verify_s);
      if (!sim.policy.worker_alive(worker)) return;  // the proof died with its worker; requeued
      sim.record(partition, Phase::verify, "cpu:verify", start_s, 0, 0);
    }
    sim.policy.attempt_succeeded(partition);
    sim.announce(Simulation::Event::proved);
  }
}

// Whether `copies` copies at `copy_gbps` each can fill a link of `link_gbps` (a margin keeps rounding
// out of it). A link that they cannot fill never sets a copy's rate, so it stays off the routes:
// each link on a route costs SimGrid work at every copy chunk (measured: one link instead of three
// takes 7 % fewer instructions per activity, 14.4k -> 13.4k, on the seed scenario).
bool copies_can_fill(double link_gbps, double copies, double copy_gbps) { return copies * copy_gbps >= link_gbps * (1 - 1e-9); }

void build_platform(Simulation& sim) {
  const Hardware& hardware = sim.scenario.hardware;
  sg4::NetZone* zone = sg4::create_full_zone("host0");
  // Speeds of 1 flop/s (the CPU at pstate 0): an execution's flops are its seconds on one core or one GPU.
  const std::uint32_t workers = hardware.gpus * sim.scenario.policy.workers_per_gpu;
  const double slowdown = sim.scenario.calibration.synth_slowdown_per_extra_thread;
  sg4::Host* cpu = zone->create_host("cpu", CpuHost::rates_by_pstate(hardware.cores, slowdown,
                                                                      sim.scenario.policy.synthesis_threads, workers))
                       ->set_core_count(int(std::max(hardware.cores, workers)))
                       ->seal();
  sim.cpu = std::make_unique<CpuHost>(cpu, hardware.cores, slowdown, workers);
  // Routes are [memory bus, engine link, PCIe link], less the links that the copies crossing them
  // cannot fill: all copy engines of all GPUs for the memory bus, a GPU's engines for its PCIe link.
  const double fastest_copy = sim.copy_rates_gbps.back();
  const double engines_per_gpu = hardware.copy_engines_h2d;
  const double fastest_per_gpu = std::min(hardware.pcie_h2d_gbps, engines_per_gpu * fastest_copy);
  const sg4::Link* memory_bus =
      copies_can_fill(hardware.host_memory_gbps, hardware.gpus, fastest_per_gpu)
          ? zone->create_link("membus", hardware.host_memory_gbps * 1e9)->set_latency(0)->seal()
          : nullptr;
  for (std::uint32_t index = 0; index < hardware.gpus; ++index) {
    Gpu gpu;
    gpu.host = zone->create_host(fmt::format("gpu{}", index), 1.0)->seal();
    gpu.pcie_resource = fmt::format("pcie{}:h2d", index);
    const sg4::Link* pcie =
        copies_can_fill(hardware.pcie_h2d_gbps, engines_per_gpu, fastest_copy)
            ? zone->create_link(gpu.pcie_resource, hardware.pcie_h2d_gbps * 1e9)->set_latency(0)->seal()
            : nullptr;
    for (std::uint32_t engine_index = 0; engine_index < hardware.copy_engines_h2d; ++engine_index) {
      CopyEngine engine;
      const std::string name = fmt::format("gpu{}:h2d_engine{}", index, engine_index);
      if (memory_bus == nullptr && pcie == nullptr) {  // its copies share no link: it executes them
        std::vector<double> bytes_per_s;
        for (const double rate_gbps : sim.copy_rates_gbps) bytes_per_s.push_back(rate_gbps * 1e9);
        engine.endpoint = zone->create_host(name, bytes_per_s)->seal();
      } else {
        engine.endpoint = zone->create_host(name, 1.0)->seal();
        engine.link = zone->create_link(name, hardware.pcie_h2d_gbps * 1e9)->set_latency(0)->seal();
        std::vector<sg4::LinkInRoute> route;
        if (memory_bus != nullptr) route.emplace_back(memory_bus);
        route.emplace_back(engine.link);
        if (pcie != nullptr) route.emplace_back(pcie);
        // Equal (zero) latency on every route: CM02 weights sharing by route latency.
        zone->add_route(cpu->get_netpoint(), engine.endpoint->get_netpoint(), nullptr, nullptr, route, false);
      }
      gpu.copy_engines.push_back(engine);
    }
    gpu.free_copy_engines = std::make_unique<FifoSemaphore>(hardware.copy_engines_h2d);
    gpu.compute = std::make_unique<FifoSemaphore>(1);
    sim.gpus.push_back(std::move(gpu));
  }
  zone->seal();
}

// Spans in start order, ties in recording order. Sorting (start, recording index) keys and
// moving each span once costs a ninth of stable-sorting the spans, each with two strings
// (callgrind, 5000 partitions of the seed: 45M -> 5M instructions, 2 % of the simulation).
trace::Trace in_start_order(trace::Trace recorded) {
  std::vector<std::pair<double, std::size_t>> order;
  order.reserve(recorded.size());
  for (std::size_t index = 0; index < recorded.size(); ++index) order.emplace_back(recorded[index].start_s, index);
  std::ranges::sort(order);
  trace::Trace sorted;
  sorted.reserve(recorded.size());
  for (const auto& [start_s, index] : order) sorted.push_back(std::move(recorded[index]));
  return sorted;
}

bool simulation_ran_in_this_process = false;

}  // namespace

SimulationResult simulate_in_this_process(const Scenario& scenario) {
  if (simulation_ran_in_this_process)
    throw std::logic_error("simulate_in_this_process: SimGrid allows one engine per process; use simulate()");
  simulation_ran_in_this_process = true;
  int argc = 1;
  char program[] = "zkpipe-model";
  char* argv[] = {program, nullptr};
  xbt_log_control_set("root.thresh:critical");
  sg4::Engine engine(&argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  // Full (not lazy) updates: with tens of long synthesis executions alive, lazy action heaps cost
  // more than re-solving these small systems (measured: ~1.3-1.9x more activities per second).
  sg4::Engine::set_config("cpu/optim:Full");
  sg4::Engine::set_config("network/optim:Full");

  Simulation sim(scenario);
  sim.spans.reserve(std::size_t(scenario.workload.partitions) * (scenario.calibration.gpu_phase_cost.size() + 6));
  if (sim.faults.pinned_allocation_fails()) sim.policy.pinned_allocation_failed();
  build_platform(sim);
  for (std::uint32_t thread = 0; thread < scenario.policy.synthesis_threads; ++thread)
    sg4::Actor::create(fmt::format("synth{}", thread), sim.cpu->host(), [&sim, thread] { synthesis_thread(sim, thread); });
  const std::uint32_t workers = scenario.hardware.gpus * scenario.policy.workers_per_gpu;
  for (policy::WorkerId worker = 0; worker < workers; ++worker)
    sg4::Actor::create(fmt::format("worker{}", worker), sim.cpu->host(), [&sim, worker] { gpu_worker(sim, worker); });
  for (std::size_t worker = 0; worker < scenario.faults.worker_death_s.size() && worker < workers; ++worker) {
    const double death_s = scenario.faults.worker_death_s[worker];
    sg4::Actor::create(fmt::format("death{}", worker), sim.cpu->host(), [&sim, worker, death_s] {
      sg4::this_actor::sleep_until(death_s);
      if (sim.staging_held_by_worker[worker]) {
        sim.dies_after_copy[worker] = true;
      } else {
        sim.worker_died(policy::WorkerId(worker));
      }
    })->daemonize();
  }
  engine.run();

  SimulationResult result;
  result.spans = in_start_order(std::move(sim.spans));
  result.activities = sim.activities;
  result.proved = sim.policy.counters().proved;
  result.failed = sim.policy.counters().failed;
  result.failed_attempts = sim.policy.counters().failed_attempts;
  result.staging = sim.policy.staging();
  result.faults_injected = sim.faults.injected();
  if (!sim.policy.finished())
    throw std::runtime_error(fmt::format("simulation of {} stopped with partitions unfinished (a deadlock in the policy)",
                                         scenario.name));
  return result;
}

std::string serialize_result(const SimulationResult& result) {
  return fmt::format("# activities {} proved {} failed {} failed_attempts {} staging {} {}\n", result.activities,
                     result.proved, result.failed, result.failed_attempts, policy::staging_name(result.staging),
                     faults::format_fault_counts(result.faults_injected)) +
         trace::to_csv(result.spans);
}

SimulationResult deserialize_result(std::string_view origin, std::string_view text) {
  SimulationResult result;
  std::istringstream counters{std::string(text.substr(0, text.find('\n')))};
  std::string hash, activities, proved, failed, failed_attempts, staging_key, staging;
  counters >> hash >> activities >> result.activities >> proved >> result.proved >> failed >> result.failed >>
      failed_attempts >> result.failed_attempts >> staging_key >> staging;
  const auto staging_used = policy::parse_staging(staging);
  if (!counters || activities != "activities" || !staging_used)
    throw std::runtime_error(fmt::format("{}: not a simulation result (first line: counters)", origin));
  result.staging = *staging_used;
  std::string fault_counts;
  std::getline(counters >> std::ws, fault_counts);
  try {
    result.faults_injected = faults::parse_fault_counts(fault_counts);
  } catch (const std::invalid_argument&) {
    throw std::runtime_error(fmt::format("{}: not a simulation result (first line: counters, then fault counts)", origin));
  }
  result.spans = trace::read_csv_text(origin, text);
  return result;
}

trace::RunExpectations trace_expectations(const Scenario& scenario, const SimulationResult& result) {
  trace::RunExpectations expected;
  expected.partitions = scenario.workload.partitions;
  expected.proved = result.proved;
  expected.failed = result.failed;
  expected.host_budget_bytes = scenario.policy.host_budget_bytes;
  expected.partitions_in_flight_max = scenario.policy.partitions_in_flight;
  if (result.staging == policy::Staging::pinned) {
    expected.pool_slabs = scenario.policy.pool_slabs;
    expected.pools = scenario.policy_settings().pools();
  }
  return expected;
}

SimulationResult simulate(const Scenario& scenario) {
  const auto outputs = run_in_children(1, [&](std::size_t) { return serialize_result(simulate_in_this_process(scenario)); }, 1);
  return deserialize_result("simulation of " + scenario.name, outputs.front());
}

}  // namespace zkpipe::model
