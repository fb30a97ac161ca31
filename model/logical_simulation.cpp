#include <algorithm>
#include <set>

#include "costed_work.hpp"
#include "runtime/logical_runtime.hpp"
#include "simulation.hpp"

namespace zkpipe::model {

namespace {

// The platform the model's costs run on in logical time (CostedWork's Machine): each step runs at
// the rate of the load it starts under, and keeps it. Copy engines of one GPU do not share a link.
// Where nothing contends (no synthesis slowdown, no more executions than cores, one copy engine
// per link that it cannot fill) this is SimGrid's timeline exactly (tests/model/logical_time_test).
class LogicalMachine {
 public:
  LogicalMachine(const Scenario& scenario, runtime::LogicalRuntime& runtime) : scenario_(scenario), runtime_(runtime) {
    for (std::uint32_t gpu = 0; gpu < scenario.hardware.gpus; ++gpu) {
      free_copy_engines_.push_back(std::make_unique<EngineQueue>(scenario.hardware.copy_engines_h2d));
      copy_engine_busy_.emplace_back(scenario.hardware.copy_engines_h2d, false);
    }
  }

  std::uint64_t activities = 0;

  double now_s() const { return runtime_.now_s(); }
  void synthesize(double core_s) { run_on_host(synthesizing_, core_s); }
  void host_work(policy::WorkerId, double core_s) { run_on_host(executing_, core_s); }
  struct Kernel {
    double end_s;
  };
  Kernel start_kernel(policy::WorkerId, std::uint32_t, double seconds) {
    if (seconds <= 0) return {now_s()};
    ++activities;
    return {now_s() + seconds};
  }
  void wait_kernel(policy::WorkerId, const Kernel& kernel) {
    if (kernel.end_s > now_s()) runtime_.sleep_until(kernel.end_s);
  }
  std::uint32_t take_copy_engine(std::uint32_t gpu) {
    free_copy_engines_[gpu]->lock();
    std::vector<bool>& busy = copy_engine_busy_[gpu];
    const auto engine = std::uint32_t(std::ranges::find(busy, false) - busy.begin());
    busy[engine] = true;
    return engine;
  }
  void release_copy_engine(std::uint32_t gpu, std::uint32_t engine) {
    copy_engine_busy_[gpu][engine] = false;
    free_copy_engines_[gpu]->unlock();
  }
  void copy(policy::WorkerId, std::uint32_t, std::uint32_t, std::uint64_t bytes, const H2dPathCost& path, double slowdown) {
    for (std::uint64_t sent = 0; sent < bytes;) {
      const std::uint64_t chunk = std::min(scenario_.hardware.h2d_chunk_bytes, bytes - sent);
      spend(double(chunk) / (copy_rate_gbps(scenario_, path, running(synthesizing_), slowdown) * 1e9));
      sent += chunk;
    }
  }
  void sleep_for(double seconds) { runtime_.sleep_for(seconds); }

 private:
  using EngineQueue = runtime::FifoSemaphore<runtime::LogicalRuntime::WaitQueue>;

  // Work on the host runs at the rate of the load it starts under, itself included. The load at an
  // instant is the work that started before it and ends after it: as in SimGrid, where work ending
  // at an instant has ended, and work starting then has not yet loaded the host, for whatever acts
  // at that instant.
  using Interval = std::pair<double, double>;  // start_s, end_s
  void run_on_host(std::multiset<Interval>& running_work, double core_s) {
    if (core_s <= 0) return;
    const double start_s = now_s();
    const std::uint32_t synthesizing = running(synthesizing_) + (&running_work == &synthesizing_);
    const std::uint32_t executing = running(executing_) + (&running_work == &executing_);
    const double rate = &running_work == &synthesizing_
                            ? synthesis_rate(scenario_, synthesizing, executing)
                            : execution_rate(scenario_, synthesizing, executing);
    const double end_s = start_s + core_s / rate;
    const auto work = running_work.emplace(start_s, end_s);
    runtime_.sleep_until(end_s);
    ++activities;
    running_work.erase(work);
  }
  std::uint32_t running(const std::multiset<Interval>& work) const {
    const double now = now_s();
    return std::uint32_t(std::ranges::count_if(work, [now](const Interval& w) { return w.first < now && now < w.second; }));
  }
  void spend(double seconds) {
    runtime_.sleep_for(seconds);
    ++activities;
  }

  const Scenario& scenario_;
  runtime::LogicalRuntime& runtime_;
  std::vector<std::unique_ptr<EngineQueue>> free_copy_engines_;
  std::vector<std::vector<bool>> copy_engine_busy_;
  std::multiset<Interval> synthesizing_, executing_;  // the work on the host now
};

}  // namespace

SimulationResult simulate_in_logical_time(const Scenario& scenario, std::uint64_t tie_seed) {
  runtime::LogicalRuntime logical(tie_seed);
  LogicalMachine machine(scenario, logical);
  return run_costed_pipeline(scenario, logical, machine);
}

}  // namespace zkpipe::model
