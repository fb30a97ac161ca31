// fixed_base_cuda.cu — the GPU's fixed-base products (contract in fixed_base_cuda.cuh).
#include "kernels/ec/fixed_base_cuda.cuh"

#include <algorithm>
#include <stdexcept>

namespace zk::ec {
namespace {

constexpr int kThreads = 128;

template <class Curve>
__global__ void fixed_base_kernel(const affine_t<Curve>* table, const bls12_381::Fr* scalars, affine_t<Curve>* out,
                                  size_t n) {
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n) out[i] = fixed_base_product<Curve>(table, scalars[i]).to_affine();
}

}  // namespace

template <class Curve>
CudaFixedBase<Curve>::CudaFixedBase(std::span<const Affine> table, size_t chunk_points)
    : chunk_points_(chunk_points), table_(FixedBaseLayout::entries), points_(chunk_points), scalars_(chunk_points) {
  if (table.size() != FixedBaseLayout::entries)
    throw std::invalid_argument("CudaFixedBase: the table must hold FixedBaseLayout::entries points");
  if (chunk_points == 0) throw std::invalid_argument("CudaFixedBase: chunks of zero points");
  table_.upload(table, stream_.get());
}

template <class Curve>
size_t CudaFixedBase<Curve>::workspace_bytes(size_t chunk_points) {
  return FixedBaseLayout::entries * sizeof(Affine) + chunk_points * (sizeof(Affine) + sizeof(bls12_381::Fr));
}

template <class Curve>
void CudaFixedBase<Curve>::mul_many(std::span<const bls12_381::Fr> scalars, std::span<Affine> out) {
  if (scalars.size() != out.size()) throw std::invalid_argument("CudaFixedBase::mul_many: size mismatch");
  for (size_t begin = 0; begin < scalars.size(); begin += chunk_points_) {
    const size_t count = std::min(chunk_points_, scalars.size() - begin);
    scalars_.upload(scalars.subspan(begin, count), stream_.get());
    const auto blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
    fixed_base_kernel<Curve><<<blocks, kThreads, 0, stream_.get()>>>(table_.get(), scalars_.get(), points_.get(), count);
    CUDA_LAUNCH_OK();
    points_.download(out.subspan(begin, count), stream_.get());
  }
  stream_.synchronize();
}

template class CudaFixedBase<bls12_381::G1Curve>;
template class CudaFixedBase<bls12_381::G2Curve>;

}  // namespace zk::ec
