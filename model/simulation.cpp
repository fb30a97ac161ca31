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
#include "costed_work.hpp"
#include "runtime/fifo_semaphore.hpp"
#include "runtime/pipeline.hpp"
#include "trace/trace_csv.hpp"

namespace sg4 = simgrid::s4u;

namespace zkpipe::model {

namespace {

using trace::Phase;

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
  template <class Lock>
  void wait(Lock&) {
    wait();
  }
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

// Copy engines and compute sections: a release hands the unit to the longest waiter, as SimGrid's
// Semaphore and Mutex do, but taking a free unit and releasing one nobody waits for cost no
// simcall (SimGrid's cost one or two each: 2.5 % of the seed scenario's instructions).
using FifoSemaphore = runtime::FifoSemaphore<WaitQueue>;

struct Gpu {
  sg4::Host* host = nullptr;
  std::vector<CopyEngine> copy_engines;
  std::unique_ptr<FifoSemaphore> free_copy_engines;  // copies on one direction are served in order
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
  void execute_on(sg4::Host* host, double flops, std::optional<unsigned long> pstate = std::nullopt) {
    wait_until_done(start_execution(host, flops, pstate));
  }

  // Starts `flops` on `host`, first set to `pstate` where one is given. Exec::set_flops_amount,
  // set_host and start are one simcall (a switch to SimGrid's maestro and back) each from an
  // actor; from one simcall they run directly in maestro (callgrind, seed scenario: 13.4k -> 13.0k
  // instructions per activity).
  static sg4::ExecPtr start_execution(sg4::Host* host, double flops, std::optional<unsigned long> pstate = std::nullopt) {
    const sg4::ExecPtr exec = sg4::Exec::init();
    simgrid::kernel::actor::simcall_answered([&exec, host, flops, pstate] {
      if (pstate) host->set_pstate(*pstate);
      exec->set_flops_amount(flops)->set_host(host)->start();
    });
    return exec;
  }

 private:
  std::vector<sg4::ActivityPtr> waiting_{1};
};

// The CPU host: synthesis threads and the workers' CPU work (witness split, compute-section host
// time, assembly, verification) share its cores. Synthesis threads slow each other (memory
// bandwidth, caches): with n synthesizing, a core runs at 1 / (1 + slowdown * (n - 1)); with more
// executions than cores, they share the cores equally. So every execution on the host runs at one
// rate, speed(n) * min(1, cores / (n + worker executions)), and a synthesis, which also has the
// cores the engine gives it, at that rate sped up by them (costed_work.hpp's synthesis_rate).
//
// Synthesis is not a SimGrid execution. All synthesizing threads run at one rate, so the
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
  CpuHost(sg4::Host* host, const Scenario& scenario, std::uint32_t workers)
      : host_(host), scenario_(scenario), workers_(workers) {}

  // The rate of each execution on the host, the pstate table's entries in pstate order.
  static std::vector<double> rates_by_pstate(const Scenario& scenario, std::uint32_t workers) {
    std::vector<double> rates;
    for (std::uint32_t synthesizing = 0; synthesizing <= scenario.policy.synthesis_threads; ++synthesizing)
      for (std::uint32_t executing = 0; executing <= workers; ++executing)
        rates.push_back(execution_rate(scenario, synthesizing, executing));
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

  void advance_to_now() {
    const double now_s = sg4::Engine::get_clock();
    work_done_ += synthesis_rate_ * (now_s - work_done_at_s_);
    work_done_at_s_ = now_s;
  }

  // Synthesizing threads or worker executions changed. The pstate follows the workers' rate;
  // where the synthesis rate changes, the next synthesis end is re-timed and set_load returns true.
  bool set_load(std::uint32_t synthesizing, std::uint32_t executing) {
    advance_to_now();
    synthesizing_ = synthesizing;
    executing_ = executing;
    const double new_rate = execution_rate(scenario_, synthesizing, executing);
    const double new_synthesis_rate = synthesis_rate(scenario_, synthesizing, executing);
    if (new_rate != rate_) host_->set_pstate(int(synthesizing * (workers_ + 1) + executing));
    rate_ = new_rate;
    if (new_synthesis_rate == synthesis_rate_) return false;
    synthesis_rate_ = new_synthesis_rate;
    time_next_end();
    return true;
  }

  // Arms the timer for the end of the first synthesis of `running_` at the current rate.
  void time_next_end() {
    if (next_end_ != nullptr) next_end_->remove();
    next_end_ = nullptr;
    if (running_.empty()) return;
    next_end_ = simgrid::kernel::timer::Timer::set(
        sg4::Engine::get_clock() + std::max(0.0, running_.top().work_done_at_end - work_done_) / synthesis_rate_,
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
  const Scenario& scenario_;
  std::uint32_t workers_;
  std::uint32_t synthesizing_ = 0;
  std::uint32_t executing_ = 0;  // workers' executions running on the host
  double rate_ = 1;              // of each worker execution on the host, as pstate 0
  double synthesis_rate_ = 1;    // of each synthesis: one-core seconds of its work per second
  double work_done_ = 0;         // one-core seconds a synthesis running since the start would have done ...
  double work_done_at_s_ = 0;    // ... by this simulated time
  std::priority_queue<Synthesis, std::vector<Synthesis>, std::greater<>> running_;
  std::uint64_t next_sequence_ = 0;
  simgrid::kernel::timer::Timer* next_end_ = nullptr;  // when the first of `running_` ends
};

// The pipeline's runtime on SimGrid: actors on the CPU host, the simulated clock, FIFO waits. The
// pipeline's mutex is a no-op: SimGrid runs actors cooperatively on one OS thread and switches
// only at simcalls, so checking the policy and then waiting cannot miss a wake-up.
class SimgridRuntime {
 public:
  struct Mutex {
    void lock() {}
    void unlock() {}
  };
  using WaitQueue = model::WaitQueue;
  struct Section : FifoSemaphore {
    Section() : FifoSemaphore(1) {}
  };

  explicit SimgridRuntime(sg4::Engine& engine) : engine_(engine) {}
  void set_host(sg4::Host* host) { host_ = host; }

  double now_s() const { return sg4::Engine::get_clock(); }
  void sleep_until(double s) { sg4::this_actor::sleep_until(s); }
  void run(std::vector<std::function<void()>> actors, std::vector<std::function<void()>> daemons) {
    std::uint32_t index = 0;
    for (auto& actor : actors) sg4::Actor::create(fmt::format("actor{}", index++), host_, std::move(actor));
    for (auto& daemon : daemons) sg4::Actor::create(fmt::format("daemon{}", index++), host_, std::move(daemon))->daemonize();
    engine_.run();
  }

 private:
  sg4::Engine& engine_;
  sg4::Host* host_ = nullptr;
};

// The platform the model's costs run on under SimGrid (CostedWork's Machine): synthesis on the CPU
// host's model-kept progress, workers' host work and kernels as executions, copies in chunks on
// the copy engines, each chunk at its path's rate under the memory load at its start.
struct SimgridMachine {
  explicit SimgridMachine(const Scenario& s) : scenario(s), waiters(s.hardware.gpus * s.policy.workers_per_gpu) {}

  const Scenario& scenario;
  std::vector<ActivityWaiter> waiters;  // one per worker
  std::unique_ptr<CpuHost> cpu;
  std::vector<Gpu> gpus;
  std::uint64_t activities = 0;
  std::vector<double> copy_rates_gbps = possible_copy_rates_gbps(scenario);

  double now_s() const { return sg4::Engine::get_clock(); }
  void synthesize(double core_s) { cpu->synthesize(core_s); }
  void host_work(policy::WorkerId worker, double core_s) { cpu->execute(waiters[worker], core_s, activities); }
  using Kernel = sg4::ExecPtr;  // null: no work
  Kernel start_kernel(policy::WorkerId, std::uint32_t gpu, double seconds) {
    if (seconds <= 0) return nullptr;
    ++activities;
    return ActivityWaiter::start_execution(gpus[gpu].host, seconds);
  }
  void wait_kernel(policy::WorkerId worker, const Kernel& kernel) {
    if (kernel) waiters[worker].wait_until_done(kernel);
  }
  std::uint32_t take_copy_engine(std::uint32_t gpu) {
    gpus[gpu].free_copy_engines->lock();
    const auto engine = std::ranges::find(gpus[gpu].copy_engines, false, &CopyEngine::busy);
    engine->busy = true;
    return std::uint32_t(engine - gpus[gpu].copy_engines.begin());
  }
  void release_copy_engine(std::uint32_t gpu, std::uint32_t engine) {
    gpus[gpu].copy_engines[engine].busy = false;
    gpus[gpu].free_copy_engines->unlock();
  }
  void sleep_for(double seconds) { sg4::this_actor::sleep_for(seconds); }

  // Copies `bytes` in chunks on one copy engine; each chunk's rate follows the memory load
  // (threads synthesizing) at its start, divided by `slowdown` (a slow-transfer fault).
  void copy(policy::WorkerId worker, std::uint32_t gpu, std::uint32_t engine_index, std::uint64_t bytes,
            const H2dPathCost& path, double slowdown) {
    CopyEngine& engine = gpus[gpu].copy_engines[engine_index];
    for (std::uint64_t sent = 0; sent < bytes;) {
      const std::uint64_t chunk = std::min(scenario.hardware.h2d_chunk_bytes, bytes - sent);
      const double rate_gbps = copy_rate_gbps(scenario, path, cpu->synthesizing(), slowdown);
      const bool rate_changed = rate_gbps != engine.rate_gbps;
      engine.rate_gbps = rate_gbps;
      if (engine.link == nullptr) {
        waiters[worker].execute_on(engine.endpoint, double(chunk),
                                   rate_changed ? std::optional(copy_rate_pstate(rate_gbps)) : std::nullopt);
      } else {
        if (rate_changed) engine.link->set_bandwidth(rate_gbps * 1e9);
        waiters[worker].wait_until_done(sg4::Comm::sendto_async(cpu->host(), engine.endpoint, chunk));
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

// Whether `copies` copies at `copy_gbps` each can fill a link of `link_gbps` (a margin keeps rounding
// out of it). A link that they cannot fill never sets a copy's rate, so it stays off the routes:
// each link on a route costs SimGrid work at every copy chunk (measured: one link instead of three
// takes 7 % fewer instructions per activity, 14.4k -> 13.4k, on the seed scenario).
bool copies_can_fill(double link_gbps, double copies, double copy_gbps) { return copies * copy_gbps >= link_gbps * (1 - 1e-9); }

void build_platform(SimgridMachine& sim) {
  const Hardware& hardware = sim.scenario.hardware;
  sg4::NetZone* zone = sg4::create_full_zone("host0");
  // Speeds of 1 flop/s (the CPU at pstate 0): an execution's flops are its seconds on one core or one GPU.
  const std::uint32_t workers = hardware.gpus * sim.scenario.policy.workers_per_gpu;
  sg4::Host* cpu = zone->create_host("cpu", CpuHost::rates_by_pstate(sim.scenario, workers))
                       ->set_core_count(int(std::max(hardware.cores, workers)))
                       ->seal();
  sim.cpu = std::make_unique<CpuHost>(cpu, sim.scenario, workers);
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
    sim.gpus.push_back(std::move(gpu));
  }
  zone->seal();
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
  // Full (not lazy) updates: re-solving these small systems costs less than keeping lazy action
  // heaps (callgrind, 1000 seed partitions pinned: 439.4M instructions, 455.4M with both lazy).
  sg4::Engine::set_config("cpu/optim:Full");
  sg4::Engine::set_config("network/optim:Full");

  SimgridMachine machine(scenario);
  build_platform(machine);
  SimgridRuntime simgrid(engine);
  simgrid.set_host(machine.cpu->host());
  return run_costed_pipeline(scenario, simgrid, machine);
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
  return runtime::run_expectations(scenario.policy_settings(), result.proved, result.failed,
                                   result.staging == policy::Staging::pinned);
}

SimulationResult simulate(const Scenario& scenario) {
  const auto outputs = run_in_children(1, [&](std::size_t) { return serialize_result(simulate_in_this_process(scenario)); }, 1);
  return deserialize_result("simulation of " + scenario.name, outputs.front());
}

}  // namespace zkpipe::model
