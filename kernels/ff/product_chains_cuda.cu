#include "kernels/ff/product_chains_cuda.cuh"

#include <array>
#include <stdexcept>

namespace zk::ff {

namespace {

template <class Element>
struct Product {
  static __device__ __forceinline__ Element mul(const Element& a, const Element& b) { return a * b; }
};
template <class P, int L>
struct Product<fp64::Element<P, L>> {
  static __device__ __forceinline__ fp64::Element<P, L> mul(const fp64::Element<P, L>& a, const fp64::Element<P, L>& b) {
    return fp64::mul(a, b);
  }
};

// Thread i: x = in[2i], y = in[2i + 1]; out[i] = x y^steps (each product in its own form).
template <class Element>
__global__ void product_chain_kernel(const Element* in, std::size_t threads, int steps, Element* out) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= threads) return;
  Element x = in[2 * i];
  const Element y = in[2 * i + 1];
  for (int s = 0; s < steps; ++s) x = Product<Element>::mul(x, y);
  out[i] = x;
}

template <class Element>
void launch(const cuda::DeviceBuffer<Element>& in, std::size_t threads, int steps, cuda::DeviceBuffer<Element>& out,
            cudaStream_t stream) {
  constexpr unsigned block = 128;
  product_chain_kernel<<<unsigned((threads + block - 1) / block), block, 0, stream>>>(in.get(), threads, steps, out.get());
  CUDA_LAUNCH_OK();
}

template <class F, int L>
std::vector<fp64::Element<typename F::params, L>> encoded(std::span<const F> values) {
  std::vector<fp64::Element<typename F::params, L>> out;
  for (const F& value : values) {
    std::array<uint64_t, F::N> words;
    value.to_canonical(words.data());
    out.push_back(fp64::encode<typename F::params, L>(words.data()));
  }
  return out;
}

template <class T>
std::vector<T> download(const cuda::DeviceBuffer<T>& buffer, cudaStream_t stream) {
  std::vector<T> host(buffer.size());
  buffer.download(host, stream);
  CUDA_OK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace

std::string_view product_kind_name(ProductKind kind) {
  switch (kind) {
    case ProductKind::fp_mont: return "fp_mont";
    case ProductKind::fp_fp64: return "fp_fp64";
    case ProductKind::fr_mont: return "fr_mont";
    case ProductKind::fr_fp64: return "fr_fp64";
  }
  return "?";
}

ProductChains::ProductChains(std::span<const bls12_381::Fp> fp, std::span<const bls12_381::Fr> fr, int steps)
    : threads_(fp.size() / 2), steps_(steps), fp_in_(2 * threads_), fp_out_(threads_), fr_in_(2 * threads_),
      fr_out_(threads_), fp64_in_(2 * threads_), fp64_out_(threads_), fr64_in_(2 * threads_), fr64_out_(threads_) {
  if (fp.size() != 2 * threads_ || fr.size() != fp.size())
    throw std::invalid_argument("ProductChains: needs an even number of Fp values and as many Fr values");
  fp_in_.upload(fp, nullptr);
  fr_in_.upload(fr, nullptr);
  fp64_in_.upload(encoded<bls12_381::Fp, 8>(fp), nullptr);
  fr64_in_.upload(encoded<bls12_381::Fr, 5>(fr), nullptr);
  CUDA_OK(cudaDeviceSynchronize());
}

void ProductChains::run(ProductKind kind, cudaStream_t stream) {
  switch (kind) {
    case ProductKind::fp_mont: return launch(fp_in_, threads_, steps_, fp_out_, stream);
    case ProductKind::fp_fp64: return launch(fp64_in_, threads_, steps_, fp64_out_, stream);
    case ProductKind::fr_mont: return launch(fr_in_, threads_, steps_, fr_out_, stream);
    case ProductKind::fr_fp64: return launch(fr64_in_, threads_, steps_, fr64_out_, stream);
  }
}

std::vector<Fp64> ProductChains::fp64_results(cudaStream_t stream) const { return download(fp64_out_, stream); }
std::vector<Fr64> ProductChains::fr64_results(cudaStream_t stream) const { return download(fr64_out_, stream); }

}  // namespace zk::ff
