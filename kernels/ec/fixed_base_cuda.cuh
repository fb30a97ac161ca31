// fixed_base_cuda.cuh — setup's fixed-base products k_i * G on a CUDA GPU, for G1 and G2 alike.
//
// CudaFixedBase<Curve> copies a FixedBaseTable's entries (the window multiples of G) to the device
// once; mul_many() then runs one thread per scalar: fixed_base_product() (one mixed addition per
// window, the CPU's own code) and the conversion to affine by the thread's own Fermat inversion
// (as costly as the sum, but no cross-thread batching). Scalars go up and points come back in
// chunks of chunk_points, so any count fits a fixed device workspace (workspace_bytes()).
// CUDA failures throw zk::cuda::CudaError naming the call; everything is released on every path.
// One stream; not thread-safe.
#pragma once
#include <cstddef>
#include <span>

#include "kernels/ec/fixed_base.hpp"
#include "kernels/util/cuda_check.hpp"

namespace zk::ec {

template <class Curve>
class CudaFixedBase {
 public:
  using Affine = affine_t<Curve>;
  static constexpr size_t default_chunk_points = size_t{1} << 22;

  // `table`: FixedBaseTable<Curve>::entries() of the base point; `chunk_points`: scalars per chunk.
  explicit CudaFixedBase(std::span<const Affine> table, size_t chunk_points = default_chunk_points);
  // Device bytes a multiplier with chunks of `chunk_points` holds (table, one chunk's scalars and points).
  static size_t workspace_bytes(size_t chunk_points = default_chunk_points);
  // out[i] = scalars[i] * G in affine form (all-zero for infinity); host spans of equal size.
  void mul_many(std::span<const bls12_381::Fr> scalars, std::span<Affine> out);

 private:
  size_t chunk_points_;
  cuda::CudaStream stream_;
  cuda::DeviceBuffer<Affine> table_, points_;
  cuda::DeviceBuffer<bls12_381::Fr> scalars_;
};

extern template class CudaFixedBase<bls12_381::G1Curve>;
extern template class CudaFixedBase<bls12_381::G2Curve>;

}  // namespace zk::ec
