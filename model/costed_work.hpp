// Contract: CostedWork<Machine> is the model's work for the one pipeline (runtime/pipeline.hpp):
// each step the engine would do costs what the scenario's calibration says, spent on a Machine,
// and faults are drawn from the scenario's seed by the one faults::FaultInjector. The Machine is
// the platform the costs run on:
//   double now_s()
//   void synthesize(double core_s)                 a synthesis's one-core work, at synthesis_rate()
//   void host_work(WorkerId, double core_s)        a worker's host work (split, assembly, verify)
//   Kernel start_kernel(WorkerId, uint32_t gpu, double s)  GPU work (inside the compute section),
//   void wait_kernel(WorkerId, const Kernel&)      started, then waited for: the worker may copy between
//   uint32_t take_copy_engine(uint32_t gpu)        the next free host-to-device engine, in FIFO order
//   void release_copy_engine(uint32_t gpu, uint32_t engine)
//   void copy(WorkerId, uint32_t gpu, uint32_t engine, uint64_t bytes, const H2dPathCost&, double slowdown)
//   void sleep_for(double s)                       a stalled copy's wait for its watchdog
// SimGrid's (model/simulation.cpp: contention on the host's cores, the memory bus and PCIe) and
// logical time's (model/logical_simulation.cpp: each step's cost at the load it starts under).
// The cost formulas below, with the GPU kernels of gpu_kernels.hpp, are the model's one definition
// of each cost. Where the key streams (srs_residency pinned-host), a kernel that reads its points
// runs as the engine's CUDA backend runs it: its first chunk copied, then per chunk its share of
// the kernel (by points) and the chunk's own cost (the engine runs the kernel once per chunk:
// GpuKernel::chunk_work_s) while the next chunk is copied, each chunk's copy an itemless h2d span
// inside the kernel's span. A kernel runs while its worker copies, rather than a copy while it computes,
// so that each copy holds its copy engine from its start to its end on the worker's own actor; the
// timeline is the engine's: a chunk's work starts once it is copied and the work before it is
// done, and its copy once the work two chunks back is done and the copy before it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "faults/fault_injector.hpp"
#include "gpu_kernels.hpp"
#include "runtime/pipeline.hpp"
#include "scenario.hpp"
#include "simulation.hpp"
#include "util/splitmix64.hpp"

namespace zkpipe::model {

// How much longer than the mean this attempt's synthesis takes: one of `factors`, drawn
// uniformly as a pure function of (seed, partition, attempt), so that every sweep point draws
// the same factor for the same partition, on every platform.
inline double synthesis_time_factor(std::uint64_t seed, std::uint32_t partition, std::uint32_t attempt,
                                    const std::vector<double>& factors) {
  if (factors.empty()) return 1;
  const double draw = zk::keyed_draw(zk::splitmix64(seed), {partition, attempt});
  return factors[std::size_t(draw * double(factors.size()))];
}

// One-core seconds of this attempt's synthesis, before contention and without its other cores.
inline double synthesis_core_s(const Scenario& scenario, const policy::SynthesisGrant& grant) {
  const Calibration& calibration = scenario.calibration;
  return calibration.synth_core_s_per_mconstraint * double(scenario.workload.constraints_per_partition) / 1e6 *
         synthesis_time_factor(scenario.seed, grant.partition, grant.attempt, calibration.synth_time_factors);
}

// The rate a copy chunk runs at: the path's rate at the memory load of `synthesizing` threads,
// divided by `slowdown` (a slow-transfer fault).
inline double copy_rate_gbps(const Scenario& scenario, const H2dPathCost& path, std::uint32_t synthesizing,
                             double slowdown) {
  return path.rate_gbps(scenario.hardware.pcie_h2d_gbps, synthesizing * scenario.calibration.synth_memory_load_threads) /
         slowdown;
}

// What each of `sharing` executions on `cores` cores gets of one: all of it, or an equal share.
inline double core_share(std::uint32_t cores, std::uint32_t sharing) {
  return sharing > cores ? double(cores) / double(sharing) : 1.0;
}

// How much slower a core runs with `synthesizing` synthesis threads slowing each other (memory
// bandwidth, caches): 1 + slowdown * (n - 1).
inline double memory_slowdown(double slowdown_per_extra_thread, std::uint32_t synthesizing) {
  return 1 + slowdown_per_extra_thread * double(std::max<std::uint32_t>(synthesizing, 1) - 1);
}

// The rate of each execution on the CPU host: a core at 1 / memory_slowdown; with more executions
// than cores, they share the cores equally.
inline double host_rate(std::uint32_t cores, double slowdown_per_extra_thread, std::uint32_t synthesizing,
                        std::uint32_t executing) {
  return core_share(cores, synthesizing + executing) / memory_slowdown(slowdown_per_extra_thread, synthesizing);
}

// The rate of each worker's host work (split, assembly, verification) beside `synthesizing`
// syntheses: 1 / the calibration's load factor where it measured that many, the last one beyond
// them (the split's threads share the cores with a few syntheses as with many: measured flat from
// two syntheses on); none measured: host_rate.
inline double execution_rate(const Scenario& scenario, std::uint32_t synthesizing, std::uint32_t executing) {
  const std::vector<double>& factors = scenario.calibration.host_work_load_factors;
  const std::uint32_t cores = scenario.hardware.cores;
  if (factors.empty())
    return host_rate(cores, scenario.calibration.synth_slowdown_per_extra_thread, synthesizing, executing);
  const double factor = factors[std::min<std::size_t>(synthesizing, factors.size() - 1)];
  return core_share(cores, synthesizing + executing) / factor;
}

// The rate of each synthesis, in one-core seconds of its work per second, with `synthesizing`
// running and `executing` worker executions on the host: the host's rate at that load, sped up by
// the cores the engine gives each synthesis (synthesis_cores_each) at its parallel fraction, as
// measured on that many cores where the calibration did.
inline double synthesis_rate(const Scenario& scenario, std::uint32_t synthesizing, std::uint32_t executing) {
  const Calibration& calibration = scenario.calibration;
  const double cores_each = synthesis_cores_each(scenario.policy.synthesis_core_share, scenario.hardware.cores,
                                                 scenario.policy.synthesis_threads, synthesizing);
  return host_rate(scenario.hardware.cores, calibration.synth_slowdown_per_extra_thread, synthesizing, executing) /
         synthesis_share_factor(calibration.synth_parallel_fraction, 1.0 / cores_each) /
         synthesis_cores_factor(calibration.synth_cores_factors, cores_each);
}

template <class Machine>
class CostedWork {
 public:
  struct Staged {};  // a/b/c are bytes in the model: nothing to hold
  struct Attempt {
    bool assembled = false;
  };
  using Step = runtime::Step;
  using StepSpans = runtime::StepSpans;
  using Where = runtime::Where;

  CostedWork(const Scenario& scenario, Machine& machine)
      : scenario_(scenario),
        machine_(machine),
        faults_(scenario.fault_options()),
        kernels_(gpu_kernels(scenario.workload, scenario.calibration.gpu_phase_cost)),
        streams_key_(scenario.policy.srs_residency == SrsResidency::pinned_host) {}

  faults::FaultInjector& faults() { return faults_; }
  // The spans of an attempt that succeeds at once, at most.
  std::size_t spans_per_attempt() const {
    std::size_t spans = kernels_.size() + 6;
    for (const GpuKernel& kernel : kernels_) spans += streams_key_ ? kernel.base_chunks.size() : 0;
    return spans;
  }

  Step synthesize(std::uint32_t, const policy::SynthesisGrant& grant, Staged&, StepSpans& spans) {
    const double start_s = machine_.now_s();
    machine_.synthesize(synthesis_core_s(scenario_, grant));
    spans.push_back({trace::Phase::synth, Where::synthesis, start_s, machine_.now_s(),
                     scenario_.workload.partition_abc_bytes(), scenario_.workload.constraints_per_partition});
    return Step::ok();
  }

  void check_handoff(const runtime::Context&, const Staged&) const {}

  Step copy_in(const runtime::Context& context, Staged&&, Attempt&, StepSpans& spans) {
    const H2dPathCost& path = path_of(context);
    const faults::TransferFault transfer = faults_.transfer_fault(context.partition, context.attempt);
    const std::uint32_t engine = machine_.take_copy_engine(context.gpu);
    const double start_s = machine_.now_s();
    if (transfer == faults::TransferFault::stalled) {  // no progress until the watchdog gives up
      machine_.sleep_for(scenario_.faults.stalled_transfer_s);
      spans.push_back({trace::Phase::h2d, Where::link, start_s, machine_.now_s()});
      machine_.release_copy_engine(context.gpu, engine);
      return Step::failed("the copy stalled and its watchdog gave up");
    }
    const std::uint64_t bytes = scenario_.workload.partition_abc_bytes();
    machine_.copy(context.worker, context.gpu, engine, bytes, path,
                  transfer == faults::TransferFault::slow ? scenario_.faults.slow_transfer_factor : 1);
    spans.push_back({trace::Phase::h2d, Where::link, start_s, machine_.now_s(), bytes,
                     scenario_.workload.constraints_per_partition});
    machine_.release_copy_engine(context.gpu, engine);
    if (faults_.worker_dies(context.worker, context.partition, context.attempt)) return Step::lost("the device was lost");
    return Step::ok();
  }

  // The witness split on the worker's host thread (its items: z's scalars, as the engine's), then
  // the splits' upload (no a/b/c: no items).
  Step split(const runtime::Context& context, Attempt&, StepSpans& spans) {
    const double start_s = machine_.now_s();
    if (scenario_.calibration.witness_split_s > 0) {
      machine_.host_work(context.worker, scenario_.calibration.witness_split_s);
      spans.push_back({trace::Phase::witness_split, Where::host, start_s, machine_.now_s(), 0,
                       scenario_.workload.z_length()});
    }
    if (const std::uint64_t bytes = scenario_.workload.witness_upload_bytes) upload(context, bytes, path_of(context), spans);
    return Step::ok();
  }

  Step compute(const runtime::Context& context, Attempt& attempt, StepSpans& spans) {
    for (const GpuKernel& kernel : kernels_) {
      if (!context.alive()) return Step::ok();  // a dead worker launches no more kernels
      const std::size_t span = spans.size();  // before its chunks' copies, which start inside it
      spans.push_back({kernel.phase, Where::gpu, machine_.now_s(), 0, 0, kernel.items});
      if (streams_key_ && !kernel.base_chunks.empty()) {
        run_on_streamed_bases(context, kernel, spans);
      } else {
        run_kernel(context, kernel.seconds);
      }
      spans[span].end_s = machine_.now_s();
      if (&kernel == &kernels_.front())  // the GPU held, idle
        machine_.host_work(context.worker, scenario_.calibration.compute_section_host_s);
    }
    if (!scenario_.calibration.assemble_in_compute_section || !context.alive()) return Step::ok();
    return assemble(context, attempt, spans);
  }

  Step conclude(const runtime::Context& context, Attempt& attempt, StepSpans& spans) {
    if (!attempt.assembled) {
      const Step assembled = assemble(context, attempt, spans);
      if (assembled.status != runtime::StepStatus::ok || !context.alive()) return assembled;
    }
    if (scenario_.calibration.verify_s > 0) {
      const double start_s = machine_.now_s();
      machine_.host_work(context.worker, scenario_.calibration.verify_s);
      if (context.alive()) spans.push_back({trace::Phase::verify, Where::host, start_s, machine_.now_s(), 0, 1});
    }
    return Step::ok();
  }

  void deliver(const runtime::Context&, Attempt&) {}
  void progress(const policy::PolicyCounters&) {}
  void worker_lost(const std::string&) {}

 private:
  // The copy path of the memory the attempt's staging copies from.
  const H2dPathCost& path_of(const runtime::Context& context) const {
    return scenario_.copies_staging(context.backing.staging) == policy::Staging::pinned ? scenario_.calibration.h2d_pinned
                                                                                         : scenario_.calibration.h2d_pageable;
  }

  void run_kernel(const runtime::Context& context, double seconds) {
    machine_.wait_kernel(context.worker, machine_.start_kernel(context.worker, context.gpu, seconds));
  }

  // An itemless host-to-device copy (no a/b/c: the witness splits, the key's points) on the GPU's
  // next free copy engine; none where the worker died while it waited for the engine.
  void upload(const runtime::Context& context, std::uint64_t bytes, const H2dPathCost& path, StepSpans& spans) {
    const std::uint32_t engine = machine_.take_copy_engine(context.gpu);
    if (context.alive()) {
      const double start_s = machine_.now_s();
      machine_.copy(context.worker, context.gpu, engine, bytes, path, 1);
      spans.push_back({trace::Phase::h2d, Where::link, start_s, machine_.now_s(), bytes, 0});
    }
    machine_.release_copy_engine(context.gpu, engine);
  }

  // A kernel on the key's points streamed from pinned host memory, as the engine's CUDA backend
  // runs it (DeviceBases::for_each_chunk, one MSM or batch addition per chunk): the first chunk
  // copied, then each chunk's work while the next one is copied (gpu_kernels.hpp's
  // streamed_kernel_s where nothing contends). A dead worker copies and computes no more chunks.
  void run_on_streamed_bases(const runtime::Context& context, const GpuKernel& kernel, StepSpans& spans) {
    const std::vector<BaseChunk>& chunks = kernel.base_chunks;
    const H2dPathCost& pinned = scenario_.calibration.h2d_pinned;
    upload(context, chunks.front().bytes, pinned, spans);
    for (std::size_t chunk = 0; chunk < chunks.size() && context.alive(); ++chunk) {
      const auto share = machine_.start_kernel(context.worker, context.gpu, kernel.chunk_work_s(chunk));
      if (chunk + 1 < chunks.size()) upload(context, chunks[chunk + 1].bytes, pinned, spans);
      machine_.wait_kernel(context.worker, share);
    }
  }

  // A GPU error is decided once the kernels are done, before assembly (the engine's kernels fail
  // before its proof is assembled).
  Step assemble(const runtime::Context& context, Attempt& attempt, StepSpans& spans) {
    if (faults_.gpu_error(context.partition, context.attempt)) return Step::failed("a kernel failed");
    const double start_s = machine_.now_s();
    machine_.host_work(context.worker, scenario_.calibration.assemble_s);
    attempt.assembled = true;
    if (context.alive()) spans.push_back({trace::Phase::assemble, Where::host, start_s, machine_.now_s(), 0, 1});
    return Step::ok();
  }

  const Scenario& scenario_;
  Machine& machine_;
  faults::FaultInjector faults_;
  const std::vector<GpuKernel> kernels_;  // each attempt's, in order
  const bool streams_key_;                // the kernels stream the key's points they read
};

// The pipeline's settings for a scenario: its policy, threads and scheduled worker deaths.
inline runtime::PipelineSettings pipeline_settings(const Scenario& scenario) {
  return {.policy = scenario.policy_settings(),
          .synthesis_threads = scenario.policy.synthesis_threads,
          .worker_death_s = scenario.faults.worker_death_s,
          .run_name = scenario.name,
          .source = trace::Source::simulated};
}

// Spans in start order, ties in recording order. Sorting (start, recording index) keys and
// moving each span once costs a ninth of stable-sorting the spans, each with two strings
// (callgrind, 5000 partitions of the seed: 45M -> 5M instructions, 2 % of the simulation).
inline trace::Trace in_start_order(trace::Trace recorded) {
  std::vector<std::pair<double, std::size_t>> order;
  order.reserve(recorded.size());
  for (std::size_t index = 0; index < recorded.size(); ++index) order.emplace_back(recorded[index].start_s, index);
  std::ranges::sort(order);
  trace::Trace sorted;
  sorted.reserve(recorded.size());
  for (const auto& [start_s, index] : order) sorted.push_back(std::move(recorded[index]));
  return sorted;
}

// Runs the scenario's pipeline to its end and gathers what it did; `activities()` is read after.
template <class Runtime, class Machine>
SimulationResult run_costed_pipeline(const Scenario& scenario, Runtime& runtime, Machine& machine) {
  CostedWork<Machine> work(scenario, machine);
  runtime::Pipeline pipeline(runtime, work, pipeline_settings(scenario));
  pipeline.spans().reserve(std::size_t(scenario.workload.partitions) * work.spans_per_attempt());
  if (work.faults().pinned_allocation_fails()) pipeline.pinned_allocation_failed();
  try {
    pipeline.run();
  } catch (const std::logic_error& e) {
    throw std::runtime_error(fmt::format("simulation of {}: {}", scenario.name, e.what()));
  }
  SimulationResult result;
  result.spans = in_start_order(std::move(pipeline.spans()));
  result.activities = machine.activities;
  result.proved = pipeline.policy().counters().proved;
  result.failed = pipeline.policy().counters().failed;
  result.failed_attempts = pipeline.policy().counters().failed_attempts;
  result.staging = pipeline.policy().staging();
  result.faults_injected = work.faults().injected();
  return result;
}

}  // namespace zkpipe::model
