// product_chains_cuda.cuh — the GPU's field products timed alone: every thread of a full grid runs
// a chain of `steps` dependent products from its own values (so no memory traffic in the loop),
// x = x y or x = x^2, in Fp or Fr (mont_t's device product and square, mont_ptx.hpp).
// `bench_kernels --products` times them; the GPU field tests check that each chain ends where the
// host's does.
#pragma once
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/ff/bls12-381.hpp"
#include "kernels/util/cuda_check.hpp"

namespace zk::ff {

enum class ProductKind { fp_mul, fp_sqr, fr_mul, fr_sqr };
inline constexpr ProductKind kProductKinds[] = {ProductKind::fp_mul, ProductKind::fp_sqr, ProductKind::fr_mul,
                                                ProductKind::fr_sqr};
std::string_view product_kind_name(ProductKind kind);  // "fp_mul", ...

class ProductChains {
 public:
  // fp.size() / 2 chains of `steps` products each: thread i's x and y are values 2i and 2i + 1 of
  // `fp` (and of `fr`, of the same size); a chain of squares uses x alone.
  ProductChains(std::span<const bls12_381::Fp> fp, std::span<const bls12_381::Fr> fr, int steps);
  void run(ProductKind kind, cudaStream_t stream);
  std::size_t products() const { return threads_ * std::size_t(steps_); }
  // Each chain's last x, after run(kind) for a kind of that field.
  std::vector<bls12_381::Fp> fp_results(cudaStream_t stream) const;
  std::vector<bls12_381::Fr> fr_results(cudaStream_t stream) const;

 private:
  std::size_t threads_;
  int steps_;
  cuda::DeviceBuffer<bls12_381::Fp> fp_in_, fp_out_;
  cuda::DeviceBuffer<bls12_381::Fr> fr_in_, fr_out_;
};

}  // namespace zk::ff
