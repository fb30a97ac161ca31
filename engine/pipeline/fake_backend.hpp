// fake_backend.hpp — a fake GPU for running the engine without one: a ProverBackend that computes
// with the CPU backend (so its proofs verify) and injects faults and delays at the sites where a
// real device fails. Every fault comes from the job's faults::FaultInjector, the one seeded
// source the model draws from too (engine/faults/fault_injector.hpp), keyed the model's way:
//  - copy error / stall (stalled_transfer, per partition and attempt): stage_quotient_inputs
//    hangs stalled_transfer_s, then throws DeviceError as a watchdog would: the attempt is
//    retried, the partition's host memory having been returned;
//  - slow copy (slow_transfer, per partition and attempt): the copy delay is slow_transfer_factor
//    times longer;
//  - device lost (worker_death, per worker, partition and attempt): at the end of the copy, the
//    call and every later one throw DeviceLost (an unrecoverable device): the engine retires the
//    worker and requeues its partition on the others;
//  - kernel error (gpu_error, per partition and attempt): the attempt's first kernel call throws
//    DeviceError (a CUDA launch error): retried;
//  - wrong result (wrong_result, per partition and attempt): the attempt's first G1 MSM or batch
//    addition returns a wrong point (silent corruption): the proof fails verification, is not
//    written, and the attempt is retried;
//  - refused pinning (pinned_allocation_failure, once per job): decided by the engine where it
//    allocates the pool; it warns and stages in pageable memory for the whole job.
// Each site is asked once per attempt, so the injector's counts are the faults injected. Delays
// set how long the copy and each kernel call last, so tests see overlap and waiting. Error
// messages carry the fault seed. Not thread-safe (one per worker); the injector is shared and thread-safe.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>

#include "engine/pipeline/fault_injecting_backend.hpp"
#include "faults/fault_injector.hpp"

namespace zk::pipeline {

struct FakeDeviceOptions {
  // The seed and each fault's probability. A fake copy error fails at once (stalled_transfer_s 0)
  // unless told to hang first.
  zkpipe::faults::FaultOptions faults = [] {
    zkpipe::faults::FaultOptions options;
    options.stalled_transfer_s = 0;
    return options;
  }();
  // How long each stage_quotient_inputs, and each quotient, MSM and batch-addition call, lasts at
  // least: the CPU's maths runs inside it, as a device's kernel runs while the host waits.
  double copy_delay_s = 0;
  double kernel_delay_s = 0;
  // The fake device's memory, which the engine's device-memory plan fits the job into (0: as
  // much as the job needs).
  uint64_t device_memory_bytes = 0;
  // The fixed-base tables the fake device offers the engine's device-memory plan. It builds none:
  // a table taken holds its bytes in the plan and changes no delay.
  std::vector<zkpipe::policy::FixedBaseOption> fixed_bases;
};

class FakeBackend final : public FaultInjectingBackend {
 public:
  // `faults` (the job's, shared by its workers) must outlive the backend; `worker` keys device loss.
  FakeBackend(const FakeDeviceOptions& options, zkpipe::faults::FaultInjector& faults, uint32_t worker);
  void begin_attempt(uint32_t partition, uint32_t attempt) override;

  std::string name() const override { return "fake"; }
  std::string prepare(const groth16::ProvingKey& pk, std::span<const zkpipe::policy::FixedBaseTable> fixed_bases) override {
    return cpu_->prepare(pk, fixed_bases);
  }
  // What a GPU would hold of the data the fake device moves: the key's bases (once per device),
  // and each worker's a/b/c and witness.
  zkpipe::policy::DeviceFootprint device_footprint(const groth16::ProvingKey& pk,
                                                  const groth16::MsmScalarCounts& scalars) const override;
  void quotient_evaluations(std::span<groth16::Fr> a, std::span<groth16::Fr> b, std::span<groth16::Fr> c,
                            const ntt::Domain& domain) override;
  groth16::G1 msm(std::span<const groth16::G1Affine> bases, std::span<const uint32_t> indices,
                  std::span<const groth16::Fr> scalars) override;
  groth16::G2 msm(std::span<const groth16::G2Affine> bases, std::span<const uint32_t> indices,
                  std::span<const groth16::Fr> scalars) override;
  groth16::G1 sum(std::span<const groth16::G1Affine> bases, std::span<const uint32_t> indices) override;
  groth16::G2 sum(std::span<const groth16::G2Affine> bases, std::span<const uint32_t> indices) override;
  void stage_quotient_inputs(std::span<const groth16::Fr> a, std::span<const groth16::Fr> b,
                             std::span<const groth16::Fr> c) override;

 private:
  struct Attempt {
    uint32_t partition = 0, attempt = 0;
    bool kernel_error_asked = false, wrong_result_asked = false;
  };
  // `compute` run as a kernel at `site`: throws DeviceLost on a lost device; lasts the kernel
  // delay (or the CPU maths, where longer), and then throws DeviceError where the attempt's kernel
  // error falls on this call, or returns what `compute` returned.
  template <class Compute>
  auto kernel(const char* site, Compute&& compute);
  // The attempt's G1 result, made wrong where the attempt's wrong result falls on this call.
  groth16::G1 maybe_corrupt(groth16::G1 result);
  void throw_if_lost(const char* site) const;
  std::string where() const;  // "fake device 2, partition 3 attempt 1 (fault seed 11)"

  FakeDeviceOptions options_;
  zkpipe::faults::FaultInjector& faults_;
  uint32_t worker_;
  std::optional<Attempt> attempt_;
  bool lost_ = false;
  std::unique_ptr<groth16::ProverBackend> cpu_;
};

}  // namespace zk::pipeline
