// cpu_backend.hpp — the prover's CPU backend: multithreaded NTTs and Pippenger MSMs from
// kernels/ (the same arithmetic the CUDA kernels compile). Thread-safe; uses worker_threads().
#pragma once
#include "engine/groth16/backend.hpp"

namespace zk::groth16 {

class CpuBackend final : public ProverBackend {
 public:
  std::string name() const override { return "cpu"; }
  void quotient_evaluations(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c,
                            const ntt::Domain& domain) override;
  G1 msm(std::span<const G1Affine> bases, std::span<const uint32_t> indices,
         std::span<const Fr> scalars) override;
  G2 msm(std::span<const G2Affine> bases, std::span<const uint32_t> indices,
         std::span<const Fr> scalars) override;
  G1 sum(std::span<const G1Affine> bases, std::span<const uint32_t> indices) override;
  G2 sum(std::span<const G2Affine> bases, std::span<const uint32_t> indices) override;
};

}  // namespace zk::groth16
