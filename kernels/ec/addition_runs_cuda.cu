#include "kernels/ec/addition_runs_cuda.cuh"

#include <stdexcept>

#include "kernels/msm/pippenger_cuda.cuh"

namespace zk::ec {

namespace {

// The accumulation's launch shape (GpuMsmPolicy::accumulate_shape), so the chains run under its
// register cap.
template <class Curve>
constexpr msm::GpuMsmPolicy::LaunchShape kChainShape = msm::GpuMsmPolicy::accumulate_shape(sizeof(typename Curve::field));

template <class Curve>
__global__ void __launch_bounds__(kChainShape<Curve>.threads, kChainShape<Curve>.blocks_per_sm)
    xyzz_chain_kernel(const affine_t<Curve>* points, uint32_t m, std::size_t chains, int steps, xyzz_t<Curve>* sums) {
  const std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (t >= chains) return;
  xyzz_t<Curve> sum = xyzz_t<Curve>::infinity();
  for (int s = 0; s < steps; ++s) sum += points[addition_operand(t * steps + s, m)];
  sums[t] = sum;
}

// Thread t's sums are g = k threads + t for k < batch (a warp's stores side by side). The way
// out keeps each running product in its sum's x; the way back turns it into that sum's inverse
// slope denominator: (x_q - x_a)^-1 = (the inverse of everything after it) * (the product before it).
template <class Curve>
__global__ void affine_batch_kernel(const affine_t<Curve>* points, uint32_t m, std::size_t threads, int batch,
                                    affine_t<Curve>* sums) {
  using Field = typename Curve::field;
  const std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (t >= threads) return;
  Field product = Field::one();
  for (int k = 0; k < batch; ++k) {
    const std::size_t g = k * threads + t;
    sums[g].x = product;
    product = product * (points[addition_operand(2 * g + 1, m)].x - points[addition_operand(2 * g, m)].x);
  }
  Field inverse = product.inverse();
  for (int k = batch; k-- > 0;) {
    const std::size_t g = k * threads + t;
    const affine_t<Curve> a = points[addition_operand(2 * g, m)], q = points[addition_operand(2 * g + 1, m)];
    const Field slope = (q.y - a.y) * (inverse * sums[g].x);
    inverse = inverse * (q.x - a.x);
    const Field x = slope.sqr() - a.x - q.x;
    sums[g] = {x, slope * (a.x - x) - a.y};
  }
}

}  // namespace

template <class Curve>
AdditionRuns<Curve>::AdditionRuns(const Affine* d_points, uint32_t m, std::size_t additions)
    : points_(d_points), m_(m), additions_(additions) {
  if (m < 2 || (m & (m - 1))) throw std::invalid_argument("AdditionRuns: m must be a power of two, at least 2");
}

template <class Curve>
void AdditionRuns<Curve>::run_xyzz(int steps, cudaStream_t stream) {
  if (steps < 1 || additions_ % steps) throw std::invalid_argument("AdditionRuns: steps must divide the additions");
  chains_ = additions_ / steps;
  chain_sums_.reserve(chains_);
  constexpr unsigned block = kChainShape<Curve>.threads;
  xyzz_chain_kernel<Curve><<<unsigned(cuda::blocks_for(chains_, block)), block, 0, stream>>>(
      points_, m_, chains_, steps, chain_sums_.get());
  CUDA_LAUNCH_OK();
}

template <class Curve>
void AdditionRuns<Curve>::run_affine(int batch, cudaStream_t stream) {
  if (batch < 1 || additions_ % batch) throw std::invalid_argument("AdditionRuns: batch must divide the additions");
  affine_sums_.reserve(additions_);
  const std::size_t threads = additions_ / batch;
  constexpr unsigned block = 128;
  affine_batch_kernel<Curve><<<unsigned(cuda::blocks_for(threads, block)), block, 0, stream>>>(
      points_, m_, threads, batch, affine_sums_.get());
  CUDA_LAUNCH_OK();
}

template <class Curve>
std::vector<typename AdditionRuns<Curve>::Sum> AdditionRuns<Curve>::chain_sums(cudaStream_t stream) const {
  return chain_sums_.to_host(stream, chains_);
}

template <class Curve>
std::vector<typename AdditionRuns<Curve>::Affine> AdditionRuns<Curve>::affine_sums(cudaStream_t stream) const {
  return affine_sums_.to_host(stream, additions_);
}

template class AdditionRuns<bls12_381::G1Curve>;
template class AdditionRuns<bls12_381::G2Curve>;

}  // namespace zk::ec
