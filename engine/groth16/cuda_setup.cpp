// cuda_setup.cpp — setup's fixed-base products on a GPU (contract in cuda_setup.hpp). Host code
// only (g++); the kernel lives in kernels/ec/fixed_base_cuda.cu.
#include "engine/groth16/cuda_setup.hpp"

#include "engine/util/error.hpp"
#include "kernels/ec/fixed_base_cuda.cuh"

namespace zk::groth16 {

struct CudaFixedBaseMultiplier::Impl {
  ec::CudaFixedBase<bls12_381::G1Curve> g1{ec::FixedBaseTable<bls12_381::G1Curve>(bls12_381::g1_generator()).entries()};
  ec::CudaFixedBase<bls12_381::G2Curve> g2{ec::FixedBaseTable<bls12_381::G2Curve>(bls12_381::g2_generator()).entries()};
};

CudaFixedBaseMultiplier::CudaFixedBaseMultiplier() {
  if (cuda::cuda_device_count() == 0)
    fail("setup on 'cuda': no CUDA device found (cudaGetDeviceCount reports none); use --backend cpu");
  impl_ = std::make_unique<Impl>();
}

CudaFixedBaseMultiplier::~CudaFixedBaseMultiplier() = default;

std::vector<G1Affine> CudaFixedBaseMultiplier::g1(std::span<const bls12_381::Fr> scalars) {
  std::vector<G1Affine> out(scalars.size());
  impl_->g1.mul_many(scalars, out);
  return out;
}

std::vector<G2Affine> CudaFixedBaseMultiplier::g2(std::span<const bls12_381::Fr> scalars) {
  std::vector<G2Affine> out(scalars.size());
  impl_->g2.mul_many(scalars, out);
  return out;
}

}  // namespace zk::groth16
