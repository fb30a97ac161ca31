// pippenger_cuda.cuh — multi-scalar multiplication and batch addition on a CUDA GPU, for G1 and
// G2 alike (one template over the curve), the device twin of pippenger_cpu.hpp (its oracle).
//
// CudaMsm<Curve>::msm() computes sum_i k_i * bases[index[i]] (index optional) for device-resident
// affine bases (all-zero = infinity) and device-resident Fr scalars in Montgomery form:
//   1. digits:      each scalar made canonical once, cut into signed (Booth) c-bit digits, one
//                   (bucket, point|sign) pair per window; bucket sizes counted;
//   2. sort:        per window, the pairs sorted by bucket (CUB radix sort, c key bits);
//   3. accumulate:  every bucket split into segments of at most GpuMsmPolicy::segment_points
//                   points (so one hot bucket cannot stall the launch); one thread per segment
//                   adds its points into an XYZZ accumulator (ec/xyzz.hpp: 10 products per
//                   point where Jacobian takes 11); then the segment sums of
//                   each bucket are folded, fold_factor at a time, until one is left;
//   4. reduce:      per window, sum_b b * bucket_b by running sums over ranges of buckets in
//                   parallel (each range's offset added as a small multiple), then a block per
//                   window sums its ranges;
//   5. combine:     the windows' sums come to the host and meet by doubling (Horner).
// Steps 1 and 2 depend on the scalars only: CudaMsmDigits computes them once, and
// CudaMsm<Curve>::msm(bases, index, digits) runs steps 3-5 on them, so MSMs over the same scalars
// (the prover's A, B_G1 and B_G2, in G1 and G2) share one decomposition and sort.
// CudaMsm<Curve>::sum() is the batch addition sum_i bases[index[i]]: a grid-wide tree reduction.
// workspace_bytes() says how much device memory a call of size n takes before it runs; the
// workspace is kept between calls (grow-only). One CudaMsm (and one CudaMsmDigits) per stream;
// not thread-safe.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/ec/bls12-381.hpp"
#include "kernels/util/cuda_check.hpp"

namespace zk::msm {

using bls12_381::Fr;

// Signed digit of window w (c bits) of a canonical 256-bit scalar: Booth recoding over bits
// [w*c - 1, w*c + c - 1], in [-2^(c-1), 2^(c-1)]; sum_w digit_w 2^(w*c) is the scalar. Equals
// pippenger_cpu.hpp's signed_digit (checked by the GPU tests on host and device).
ZK_HD int32_t booth_digit(const uint64_t limbs[4], int w, int c) {
  const int lo = w * c - 1;
  uint64_t v;
  if (lo < 0) {
    v = limbs[0] << 1;
  } else {
    const int limb = lo >> 6, shift = lo & 63;
    v = limb < 4 ? limbs[limb] >> shift : 0;
    if (shift && limb + 1 < 4) v |= limbs[limb + 1] << (64 - shift);
  }
  const uint32_t low = v & 1, mid = static_cast<uint32_t>(v >> 1) & ((1u << (c - 1)) - 1);
  const uint32_t top = (v >> c) & 1;
  return static_cast<int32_t>(low + mid) - static_cast<int32_t>(top << (c - 1));
}

// The GPU MSM's tuning knobs, measured on the H200 (sm_90, 132 SMs; NVIDIA H200 143 GB, 2026-11-29)
// with kernels/bench/bench_kernels --sweep-windows (G1, random scalars, device-resident inputs,
// median of 5 after 2 warm-ups; milliseconds by window width c):
//   2^20: c=10 27.4  c=12 24.9  c=13 24.4  c=14 28.4  c=16 24.2  c=18 36.3  c=20 51.5
//   2^22: c=10 95.4  c=12 82.0  c=13 78.3  c=14 78.9  c=16 88.7  c=18 84.7  c=20 110.4
//   2^24: c=10 366   c=12 309   c=13 287   c=14 276   c=16 252   c=18 315   c=20 284
//   2^16: c=6 5.68  c=8 5.00  c=9 5.57  c=10 5.54  c=12 7.31  c=16 5.62
//   2^26: c=16 910  c=17 934  c=18 944  c=19 987  c=20 1071
// Fitting time = a * windows * n + b * windows * 2^(c-1) to the 2^24 row (c = 13, 16) gives
// a = 0.84 ns per point and window, b = 49 ns per bucket and window: a bucket costs ~58 points
// (its reduction uses full additions and runs on far fewer threads than the accumulation). With
// bucket_cost = 58 the cost model picks c = 12 at 2^20 (within 2% of the best), 13 at 2^22 and
// 16 at 2^24 and 2^26 (the best), 9 at 2^16 (11% over the best); the earlier bucket_cost = 4
// picked c = 20 at 2^24 and 2^26: 12% and 18% slower. Swept again after the PTX field arithmetic
// and the XYZZ buckets (same H200, 2026-11-29):
//   2^22: c=12 46.2  c=13 44.3  c=14 44.2  c=15 47.3  c=16 48.8  c=17 44.8  c=18 48.6  c=20 63.9
//   2^24: c=14 153.3 c=15 148.9 c=16 137.8 c=17 156.9 c=18 172.5 c=19 149.8 c=20 156.6
// so the model's choices (13 at 2^22, 16 at 2^24) are still the best.
struct GpuMsmPolicy {
  static constexpr int scalar_bits = 255;
  static constexpr int min_window_bits = 4;
  static constexpr int max_window_bits = 20;
  // Most points one thread adds into a bucket before a new segment starts.
  static constexpr uint32_t segment_points = 128;
  // Segment sums of one bucket folded into one per thread and pass (see fold_sums_kernel).
  static constexpr uint32_t fold_factor = 16;
  // Threads of the bucket reduction, over all windows together.
  static constexpr uint32_t reduction_threads = 1u << 15;
  // Blocks of 256 accumulating threads per SM. Left to itself ptxas gives the G1 accumulation
  // 252 registers (one block, 12% occupancy, measured by ncu at 2^22: IPC 1.57, 65 of the MSM's
  // 72 ms); two blocks cap it at 128 registers for 88 bytes of spills.
  static constexpr int accumulate_blocks_per_sm = 2;
  // Cost of one bucket relative to one point (digits + sort + accumulation), fitted above.
  static constexpr double bucket_cost = 58.0;

  static int windows(int c) { return (scalar_bits + 1 + c - 1) / c; }
  // Window bits minimizing windows(c) * (n + bucket_cost * 2^(c-1)).
  static int window_bits(size_t n) {
    int best = min_window_bits;
    double best_cost = 0;
    for (int c = min_window_bits; c <= max_window_bits; ++c) {
      double cost = windows(c) * (double(n) + bucket_cost * double(size_t{1} << (c - 1)));
      if (c == min_window_bits || cost < best_cost) best = c, best_cost = cost;
    }
    return best;
  }
};

// Device views of n scalars' sorted digits (steps 1 and 2), as the bucket steps read them.
struct SortedDigits {
  size_t n = 0;
  int window_bits = 0;
  const uint32_t* sorted_points = nullptr;   // per window, n entries (point index | sign bit) by bucket
  const uint32_t* bucket_sizes = nullptr;    // windows * 2^(c-1) buckets, then a zero
  const uint32_t* bucket_starts = nullptr;   // exclusive prefix sums of bucket_sizes
  const uint32_t* segment_starts = nullptr;  // first segment of each bucket, then the total
};

// Steps 1 and 2 of an MSM for any curve: the scalars' Booth digits, sorted by bucket per window,
// and the bucket and segment bounds. sorted() stays valid until the next compute().
class CudaMsmDigits {
 public:
  // Device bytes compute() of n scalars takes with `window_bits` (0: the policy's choice).
  static size_t workspace_bytes(size_t n, int window_bits = 0);
  // Decomposes the device-resident d_scalars[0, n) (Montgomery form); queued on `stream`, whose
  // later work may read sorted().
  void compute(const Fr* d_scalars, size_t n, cudaStream_t stream, int window_bits = 0);
  const SortedDigits& sorted() const { return sorted_; }

 private:
  cuda::DeviceBuffer<uint8_t> workspace_;
  SortedDigits sorted_;
};

template <class Curve>
class CudaMsm {
 public:
  using Affine = ec::affine_t<Curve>;
  using Point = ec::jacobian_t<Curve>;

  // Device bytes msm() of n scalars takes with `window_bits` (0: the policy's choice).
  static size_t workspace_bytes(size_t n, int window_bits = 0);
  // Device bytes sum() of n points takes.
  static size_t sum_workspace_bytes(size_t n);

  // sum_i scalars[i] * bases[base_index ? base_index[i] : i] for i < n. All pointers are device
  // pointers; the call returns when the result is on the host.
  Point msm(const Affine* d_bases, const uint32_t* d_base_index, const Fr* d_scalars, size_t n,
            cudaStream_t stream, int window_bits = 0);
  // The same MSM over scalars already decomposed (digits.n of them, digits computed on `stream`
  // or complete before it).
  Point msm(const Affine* d_bases, const uint32_t* d_base_index, const SortedDigits& digits, cudaStream_t stream);
  // sum_i bases[base_index ? base_index[i] : i] for i < n.
  Point sum(const Affine* d_bases, const uint32_t* d_base_index, size_t n, cudaStream_t stream);

 private:
  CudaMsmDigits digits_;                  // the one-shot msm()'s own decomposition
  cuda::DeviceBuffer<uint8_t> workspace_;  // steps 3-5, and the batch addition
};

extern template class CudaMsm<bls12_381::G1Curve>;
extern template class CudaMsm<bls12_381::G2Curve>;

}  // namespace zk::msm
