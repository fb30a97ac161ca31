// addition_runs_cuda.cuh — a curve's point additions timed alone, in the two forms a bucket
// accumulation can take: XYZZ mixed additions in chains (what CudaMsm's accumulation runs: each
// thread adds `steps` gathered affine points into its own sum) and affine additions sharing one
// field inversion a batch (Montgomery's trick: each thread sums `batch` independent pairs of
// gathered points, the running products kept in its outputs until the way back). Both gather
// their operands from a device array of m points (m a power of two) by one bijective hash of the
// operand's number, so their memory traffic is an accumulation's: random 1-2 point reads an
// addition. `bench_kernels --additions` times them; the GPU MSM tests check both against the host.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/ec/bls12-381.hpp"
#include "kernels/ec/xyzz.hpp"
#include "kernels/util/cuda_check.hpp"

namespace zk::ec {

// The point that operand i reads, of m (a power of two): multiplication by an odd number is a
// bijection mod m, so operands 2g and 2g + 1 (one affine addition's) never read the same point,
// and consecutive operands lie far apart.
ZK_HD uint32_t addition_operand(uint64_t i, uint32_t m) { return uint32_t(i * 0x9e3779b97f4a7c15ull) & (m - 1); }

template <class Curve>
class AdditionRuns {
 public:
  using Affine = affine_t<Curve>;
  using Sum = xyzz_t<Curve>;

  // `additions` of each form over the device-resident d_points[0, m) (distinct points, none the
  // negative of another; m a power of two), whose memory the caller keeps.
  AdditionRuns(const Affine* d_points, uint32_t m, std::size_t additions);
  // additions / steps chains: chain t adds the points of operands t steps .. (t + 1) steps - 1 to
  // the point at infinity.
  void run_xyzz(int steps, cudaStream_t stream);
  // additions / batch threads, each `batch` sums: sum g = point(operand 2g) + point(operand 2g + 1).
  void run_affine(int batch, cudaStream_t stream);
  // The last run's results: each chain's sum, or each affine sum.
  std::vector<Sum> chain_sums(cudaStream_t stream) const;
  std::vector<Affine> affine_sums(cudaStream_t stream) const;

 private:
  const Affine* points_;
  uint32_t m_;
  std::size_t additions_, chains_ = 0;
  cuda::DeviceBuffer<Sum> chain_sums_;
  cuda::DeviceBuffer<Affine> affine_sums_;
};

}  // namespace zk::ec
