#include "kernels/ff/product_chains_cuda.cuh"

#include <stdexcept>

namespace zk::ff {

namespace {

// Thread i: x = in[2i], y = in[2i + 1]; out[i] = x y^steps, or x^(2^steps) when squaring.
template <bool square, class F>
__global__ void product_chain_kernel(const F* in, std::size_t threads, int steps, F* out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= threads) return;
  F x = in[2 * i];
  const F y = in[2 * i + 1];
  for (int s = 0; s < steps; ++s) x = square ? x.sqr() : x * y;
  out[i] = x;
}

template <bool square, class F>
void launch(const cuda::DeviceBuffer<F>& in, std::size_t threads, int steps, cuda::DeviceBuffer<F>& out,
            cudaStream_t stream) {
  constexpr unsigned block = 128;
  product_chain_kernel<square><<<unsigned(cuda::blocks_for(threads, block)), block, 0, stream>>>(in.get(), threads, steps,
                                                                                              out.get());
  CUDA_LAUNCH_OK();
}

}  // namespace

std::string_view product_kind_name(ProductKind kind) {
  switch (kind) {
    case ProductKind::fp_mul: return "fp_mul";
    case ProductKind::fp_sqr: return "fp_sqr";
    case ProductKind::fr_mul: return "fr_mul";
    case ProductKind::fr_sqr: return "fr_sqr";
  }
  return "?";
}

ProductChains::ProductChains(std::span<const bls12_381::Fp> fp, std::span<const bls12_381::Fr> fr, int steps)
    : threads_(fp.size() / 2), steps_(steps), fp_in_(2 * threads_), fp_out_(threads_), fr_in_(2 * threads_),
      fr_out_(threads_) {
  if (fp.size() != 2 * threads_ || fr.size() != fp.size())
    throw std::invalid_argument("ProductChains: needs an even number of Fp values and as many Fr values");
  fp_in_.upload(fp, nullptr);
  fr_in_.upload(fr, nullptr);
  CUDA_OK(cudaDeviceSynchronize());
}

void ProductChains::run(ProductKind kind, cudaStream_t stream) {
  switch (kind) {
    case ProductKind::fp_mul: return launch<false>(fp_in_, threads_, steps_, fp_out_, stream);
    case ProductKind::fp_sqr: return launch<true>(fp_in_, threads_, steps_, fp_out_, stream);
    case ProductKind::fr_mul: return launch<false>(fr_in_, threads_, steps_, fr_out_, stream);
    case ProductKind::fr_sqr: return launch<true>(fr_in_, threads_, steps_, fr_out_, stream);
  }
}

std::vector<bls12_381::Fp> ProductChains::fp_results(cudaStream_t stream) const {
  return fp_out_.to_host(stream, fp_out_.size());
}
std::vector<bls12_381::Fr> ProductChains::fr_results(cudaStream_t stream) const {
  return fr_out_.to_host(stream, fr_out_.size());
}

}  // namespace zk::ff
