// cuda_setup.hpp — setup's fixed-base products on the first CUDA GPU (kernels/ec/fixed_base_cuda.cuh):
// the CPU builds each generator's window table once, the GPU multiplies. Same points as
// CpuFixedBase. The constructor throws zk::Error when no CUDA device is present; CUDA failures
// throw zk::cuda::CudaError naming the call. Needs no CUDA headers.
#pragma once
#include <memory>

#include "engine/groth16/setup.hpp"

namespace zk::groth16 {

class CudaFixedBaseMultiplier final : public FixedBaseMultiplier {
 public:
  CudaFixedBaseMultiplier();
  ~CudaFixedBaseMultiplier() override;
  std::string name() const override { return "cuda"; }
  std::vector<G1Affine> g1(std::span<const bls12_381::Fr> scalars) override;
  std::vector<G2Affine> g2(std::span<const bls12_381::Fr> scalars) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zk::groth16
