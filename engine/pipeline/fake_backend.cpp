#include "engine/pipeline/fake_backend.hpp"

#include <chrono>
#include <thread>

#include "engine/groth16/cpu_backend.hpp"

namespace zk::pipeline {

FakeBackend::FakeBackend(const FakeDeviceOptions& options, uint64_t stream)
    : options_(options),
      stream_(stream),
      random_(options.seed * 0x9e3779b97f4a7c15ull + stream),
      cpu_(std::make_unique<groth16::CpuBackend>()) {}

bool FakeBackend::draw(double probability) {
  // Always draw, so the stream's position does not depend on which probabilities are zero.
  const double u = double(random_.next_u64() >> 11) * 0x1.0p-53;
  return u < probability;
}

void FakeBackend::device_call(const char* site, double delay_s, double error_probability) {
  if (lost_ || draw(options_.device_lost_probability)) {
    lost_ = true;
    throw DeviceLost(fmt::format("fake device {} lost at {} (fault seed {})", stream_, site, options_.seed));
  }
  if (delay_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
  if (draw(error_probability))
    throw DeviceError(fmt::format("fake device {}: injected error in {} (fault seed {})", stream_, site, options_.seed));
}

void FakeBackend::stage_quotient_inputs(std::span<const groth16::Fr> a, std::span<const groth16::Fr> b,
                                        std::span<const groth16::Fr> c) {
  device_call("copy", options_.copy_delay_s, options_.copy_error_probability);
  ProverBackend::stage_quotient_inputs(a, b, c);
}

void FakeBackend::quotient_evaluations(std::span<groth16::Fr> a, std::span<groth16::Fr> b,
                                       std::span<groth16::Fr> c, const ntt::Domain& domain) {
  device_call("quotient", options_.kernel_delay_s, options_.kernel_error_probability);
  cpu_->quotient_evaluations(a, b, c, domain);
}

groth16::G1 FakeBackend::msm(std::span<const groth16::G1Affine> bases, std::span<const uint32_t> indices,
                             std::span<const groth16::Fr> scalars) {
  device_call("msm G1", options_.kernel_delay_s, options_.kernel_error_probability);
  return cpu_->msm(bases, indices, scalars);
}

groth16::G2 FakeBackend::msm(std::span<const groth16::G2Affine> bases, std::span<const uint32_t> indices,
                             std::span<const groth16::Fr> scalars) {
  device_call("msm G2", options_.kernel_delay_s, options_.kernel_error_probability);
  return cpu_->msm(bases, indices, scalars);
}

groth16::G1 FakeBackend::sum(std::span<const groth16::G1Affine> bases, std::span<const uint32_t> indices) {
  device_call("batch addition G1", options_.kernel_delay_s, options_.kernel_error_probability);
  groth16::G1 total = cpu_->sum(bases, indices);
  if (draw(options_.wrong_result_probability)) total += bls12_381::g1_generator();
  return total;
}

groth16::G2 FakeBackend::sum(std::span<const groth16::G2Affine> bases, std::span<const uint32_t> indices) {
  device_call("batch addition G2", options_.kernel_delay_s, options_.kernel_error_probability);
  return cpu_->sum(bases, indices);
}

}  // namespace zk::pipeline
