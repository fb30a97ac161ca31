// product_chains_cuda.cuh — the GPU's field products timed alone, for choosing between them: every
// thread of a full grid runs a chain of `steps` dependent products x = x y from its own random
// values (so no memory traffic in the loop), given by the caller. One product kind per launch: Fp and Fr with
// mont_t's product (mont_ptx.hpp, the integer pipe) and with fp64_mont.hpp's (the FP64 pipe).
// `bench_kernels --products` times them; the GPU field tests check that the FP64 product's chain
// ends where the host's does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/ff/bls12-381.hpp"
#include "kernels/ff/fp64_mont.hpp"
#include "kernels/util/cuda_check.hpp"

namespace zk::ff {

using Fp64 = fp64::Element<bls12_381::FpParams, 8>;
using Fr64 = fp64::Element<bls12_381::FrParams, 5>;

// mont_t's product (12 or 8 words of 32 bits, the integer pipe) or fp64::mul (8 or 5 limbs of 52
// bits, the FP64 pipe), for Fp or Fr.
enum class ProductKind { fp_mont, fp_fp64, fr_mont, fr_fp64 };
inline constexpr ProductKind kProductKinds[] = {ProductKind::fp_mont, ProductKind::fp_fp64, ProductKind::fr_mont,
                                                ProductKind::fr_fp64};
std::string_view product_kind_name(ProductKind kind);  // "fp_mont", ...

class ProductChains {
 public:
  // fp.size() / 2 chains of `steps` products each: thread i's x and y are values 2i and 2i + 1 of
  // `fp` (and of `fr`, of the same size), in each product's own form.
  ProductChains(std::span<const bls12_381::Fp> fp, std::span<const bls12_381::Fr> fr, int steps);
  void run(ProductKind kind, cudaStream_t stream);
  std::size_t products() const { return threads_ * std::size_t(steps_); }
  // The FP64 chains' results, after run(fp_fp64) and run(fr_fp64).
  std::vector<Fp64> fp64_results(cudaStream_t stream) const;
  std::vector<Fr64> fr64_results(cudaStream_t stream) const;

 private:
  std::size_t threads_;
  int steps_;
  cuda::DeviceBuffer<bls12_381::Fp> fp_in_, fp_out_;
  cuda::DeviceBuffer<bls12_381::Fr> fr_in_, fr_out_;
  cuda::DeviceBuffer<Fp64> fp64_in_, fp64_out_;
  cuda::DeviceBuffer<Fr64> fr64_in_, fr64_out_;
};

}  // namespace zk::ff
