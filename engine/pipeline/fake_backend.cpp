#include "engine/pipeline/fake_backend.hpp"

#include <chrono>
#include <thread>
#include <type_traits>

#include "engine/groth16/cpu_backend.hpp"

namespace zk::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after_s(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

using zkpipe::faults::TransferFault;

FakeBackend::FakeBackend(const FakeDeviceOptions& options, zkpipe::faults::FaultInjector& faults, uint32_t worker)
    : options_(options), faults_(faults), worker_(worker), cpu_(std::make_unique<groth16::CpuBackend>()) {}

zkpipe::policy::DeviceFootprint FakeBackend::device_footprint(const groth16::ProvingKey& pk,
                                                              const groth16::MsmScalarCounts&) const {
  return {pk.msm_point_bytes(), 0, (3 * pk.domain_size() + pk.num_vars) * sizeof(groth16::Fr), 0, options_.fixed_bases};
}

void FakeBackend::begin_attempt(uint32_t partition, uint32_t attempt) { attempt_ = Attempt{partition, attempt}; }

std::string FakeBackend::where() const {
  const uint64_t seed = faults_.options().seed;
  if (!attempt_) return fmt::format("fake device {} (fault seed {})", worker_, seed);
  return fmt::format("fake device {}, partition {} attempt {} (fault seed {})", worker_, attempt_->partition,
                     attempt_->attempt, seed);
}

void FakeBackend::throw_if_lost(const char* site) const {
  if (lost_) throw DeviceLost(fmt::format("{}: {} on a lost device", where(), site));
}

void FakeBackend::stage_quotient_inputs(std::span<const groth16::Fr> a, std::span<const groth16::Fr> b,
                                        std::span<const groth16::Fr> c) {
  throw_if_lost("copy");
  const TransferFault transfer =
      attempt_ ? faults_.transfer_fault(attempt_->partition, attempt_->attempt) : TransferFault::none;
  if (transfer == TransferFault::stalled) {
    std::this_thread::sleep_until(after_s(faults_.options().stalled_transfer_s));
    throw DeviceError(fmt::format("{}: injected copy error: the staging copy stalled and its watchdog gave up after {} s",
                                  where(), faults_.options().stalled_transfer_s));
  }
  const Clock::time_point done =
      after_s(options_.copy_delay_s * (transfer == TransferFault::slow ? faults_.options().slow_transfer_factor : 1));
  ProverBackend::stage_quotient_inputs(a, b, c);
  std::this_thread::sleep_until(done);
  if (attempt_ && faults_.worker_dies(worker_, attempt_->partition, attempt_->attempt)) {
    lost_ = true;
    throw DeviceLost(fmt::format("{}: injected device loss at the end of the copy", where()));
  }
}

template <class Compute>
auto FakeBackend::kernel(const char* site, Compute&& compute) {
  throw_if_lost(site);
  const Clock::time_point done = after_s(options_.kernel_delay_s);
  if (attempt_ && !attempt_->kernel_error_asked) {
    attempt_->kernel_error_asked = true;
    if (faults_.gpu_error(attempt_->partition, attempt_->attempt)) {
      std::this_thread::sleep_until(done);
      throw DeviceError(fmt::format("{}: injected kernel error in {}", where(), site));
    }
  }
  if constexpr (std::is_void_v<decltype(compute())>) {
    compute();
    std::this_thread::sleep_until(done);
  } else {
    auto result = compute();
    std::this_thread::sleep_until(done);
    return result;
  }
}

groth16::G1 FakeBackend::maybe_corrupt(groth16::G1 result) {
  if (!attempt_ || attempt_->wrong_result_asked) return result;
  attempt_->wrong_result_asked = true;
  if (faults_.wrong_result(attempt_->partition, attempt_->attempt)) result += bls12_381::g1_generator();
  return result;
}

void FakeBackend::quotient_evaluations(std::span<groth16::Fr> a, std::span<groth16::Fr> b,
                                       std::span<groth16::Fr> c, const ntt::Domain& domain) {
  kernel("quotient", [&] { cpu_->quotient_evaluations(a, b, c, domain); });
}

groth16::G1 FakeBackend::msm(std::span<const groth16::G1Affine> bases, std::span<const uint32_t> indices,
                             std::span<const groth16::Fr> scalars) {
  return kernel("msm G1", [&] { return maybe_corrupt(cpu_->msm(bases, indices, scalars)); });
}

groth16::G2 FakeBackend::msm(std::span<const groth16::G2Affine> bases, std::span<const uint32_t> indices,
                             std::span<const groth16::Fr> scalars) {
  return kernel("msm G2", [&] { return cpu_->msm(bases, indices, scalars); });
}

groth16::G1 FakeBackend::sum(std::span<const groth16::G1Affine> bases, std::span<const uint32_t> indices) {
  return kernel("batch addition G1", [&] { return maybe_corrupt(cpu_->sum(bases, indices)); });
}

groth16::G2 FakeBackend::sum(std::span<const groth16::G2Affine> bases, std::span<const uint32_t> indices) {
  return kernel("batch addition G2", [&] { return cpu_->sum(bases, indices); });
}

}  // namespace zk::pipeline
