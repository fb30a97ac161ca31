// fake_backend.hpp — a fake GPU for running the engine without one: a ProverBackend that computes
// with the CPU backend (so its proofs verify) and injects seeded faults and delays at the sites
// where a real device fails. The faults, each recoverable by the engine:
//  - copy_error:   stage_quotient_inputs throws DeviceError (a failed H2D copy): the attempt is
//                  retried, the partition's host memory having been returned;
//  - kernel_error: a quotient or MSM call throws DeviceError (a CUDA launch error): retried;
//  - wrong_result: a batch addition returns a wrong point (silent corruption): the proof fails
//                  verification, is not written, and the attempt is retried;
//  - device_lost:  the call and every later one throw DeviceLost (an unrecoverable device): the
//                  engine retires the worker and requeues its partition on the others.
//  - refuse_pinning: the host cannot page-lock memory (cudaHostAlloc refused): the engine warns
//                  and stages in pageable memory for the whole job.
// Delays stretch the copy and each kernel call, so tests see overlap and waiting. Every fault is
// drawn from one SplitMix64 stream seeded by (seed, stream): a failing test prints its seed, and
// the same seed gives each worker the same sequence of draws. Not thread-safe (one per worker).
#pragma once
#include <cstdint>
#include <memory>

#include "engine/groth16/backend.hpp"
#include "engine/util/error.hpp"
#include "engine/util/rng.hpp"

namespace zk::pipeline {

// A device call failed; the device is still usable.
class DeviceError : public Error {
 public:
  using Error::Error;
};
// The device is gone; its worker must stop.
class DeviceLost : public Error {
 public:
  using Error::Error;
};

struct FakeDeviceOptions {
  uint64_t seed = 1;
  double copy_error_probability = 0;
  double kernel_error_probability = 0;
  double wrong_result_probability = 0;
  double device_lost_probability = 0;
  bool refuse_pinning = false;
  double copy_delay_s = 0;    // added to each stage_quotient_inputs
  double kernel_delay_s = 0;  // added to each quotient, MSM and batch-addition call
};

class FakeBackend final : public groth16::ProverBackend {
 public:
  // `stream` separates the fault streams of the workers of one job.
  FakeBackend(const FakeDeviceOptions& options, uint64_t stream);
  std::string name() const override { return "fake"; }
  void prepare(const groth16::ProvingKey& pk) override { cpu_->prepare(pk); }
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
  // Draws the faults of one call at `site`: sleeps `delay_s`, then throws or returns normally.
  void device_call(const char* site, double delay_s, double error_probability);
  bool draw(double probability);

  FakeDeviceOptions options_;
  uint64_t stream_;
  Rng random_;
  bool lost_ = false;
  std::unique_ptr<groth16::ProverBackend> cpu_;
};

}  // namespace zk::pipeline
