// pippenger_cuda.cuh — multi-scalar multiplication and batch addition on a CUDA GPU, for G1 and
// G2 alike (one template over the curve), the device twin of pippenger_cpu.hpp (its oracle).
//
// CudaMsm<Curve>::msm() computes sum_i k_i * bases[index[i]] (index optional) for device-resident
// affine bases (all-zero = infinity) and device-resident Fr scalars in Montgomery form:
//   1. digits:      each scalar made canonical once, cut into signed (Booth) c-bit digits, one
//                   (bucket, point|sign) pair per window; bucket sizes counted;
//   2. sort:        per window, the pairs sorted by bucket (CUB radix sort, c key bits);
//   3. accumulate:  the windows' sorted pairs, laid end to end, cut into chunks of
//                   GpuMsmPolicy::chunk_points; one thread per chunk adds its points into an XYZZ
//                   accumulator (ec/xyzz.hpp: 10 products per point where Jacobian takes 11) and
//                   writes a segment sum wherever its bucket ends, so every thread adds the same
//                   number of points however the buckets are sized (wide windows have small
//                   buckets; skewed scalars, hot ones); then, where a bucket has more than
//                   reduce_segments segment sums, they are folded fold_factor at a time (as many
//                   passes as the bucket with the most needs);
//   4. reduce:      per window, sum_b b * bucket_b by running XYZZ sums over ranges of
//                   GpuMsmPolicy::range_buckets buckets in parallel (each range's offset added as
//                   a small multiple), then the range sums are summed per window by a tree;
//   5. combine:     the windows' sums come to the host and meet by doubling (Horner).
// Over a fixed-base table (CudaFixedBases: each base times 2^(c k r) in row r, with k = 1 a little
// less where the bottom windows are narrower: DigitLayout) the pairs of windows w = k r + s form
// bucket set s < k (DigitLayout::fixed_base(k)): with a row for every window (k = 1), one sort,
// one reduction and no doubling; with every other window's row (k = 2), half the table's bytes
// for a second bucket set.
// Steps 1 and 2 depend on the scalars only: CudaMsmDigits computes them once, and
// CudaMsm<Curve>::msm(bases, index, digits) runs steps 3-5 on them, so MSMs over the same scalars
// (the prover's A, B_G1 and B_G2, in G1 and G2) share one decomposition and sort.
// CudaMsm<Curve>::sum() is the batch addition sum_i bases[index[i]]: XYZZ chains filling the GPU,
// then a tree of their sums.
// workspace_bytes() says how much device memory a call of size n takes before it runs; the
// workspace is kept between calls (grow-only), and reserve() allocates it before the first call:
// an allocation (cudaFree, cudaMalloc) waits for all of the device's work, other threads' copies
// included. One CudaMsm (and one CudaMsmDigits) per stream; not thread-safe.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/ec/bls12-381.hpp"
#include "kernels/util/cuda_check.hpp"

namespace zk::msm {

using bls12_381::Fr;

// Signed digit of the c-bit window at bit `offset` of a canonical 256-bit scalar: Booth recoding
// over bits [offset - 1, offset + c - 1], in [-2^(c-1), 2^(c-1)]. Over windows laid end to end
// (each window's offset the last one's plus its width) sum_w digit_w 2^offset_w is the scalar.
ZK_HD int32_t booth_digit_at(const uint64_t limbs[4], int offset, int c) {
  const int lo = offset - 1;
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
// The digit of window w of uniform c-bit windows; equals pippenger_cpu.hpp's signed_digit (checked
// by the GPU tests on host and device).
ZK_HD int32_t booth_digit(const uint64_t limbs[4], int w, int c) { return booth_digit_at(limbs, w * c, c); }

// The GPU MSM's tuning knobs, measured on the H200 (sm_90, 132 SMs) with kernels/bench/bench_kernels
// --sweep-windows (random scalars, device-resident inputs, median of 5 after 2 warm-ups (3 at
// 2^26); 2026-12-03, chunked accumulation; milliseconds by window width c):
//   G1 2^20: c=10 16.3  c=12 14.6  c=13 12.7  c=14 13.5  c=15 14.6  c=16 11.7  c=17 19.1  c=18 28.1
//   G1 2^22: c=12 47.4  c=13 43.7  c=14 41.9  c=15 40.5  c=16 35.8  c=17 44.7  c=18 55.1  c=19 75.2
//   G1 2^24: c=14 155.2 c=15 146.4 c=16 129.0 c=17 140.7 c=18 145.5 c=19 161.6 c=20 186.8
//   G1 2^26: c=16 502.0 c=17 518.6 c=18 499.4 c=19 495.0 c=20 477.8 c=21 609.9 c=22 670.7
//   G2 2^20: c=12 43.7  c=13 38.6  c=14 40.4  c=16 37.4  c=17 47.4
//   G2 2^22: c=12 145.0 c=13 132.1 c=14 128.5 c=15 123.9 c=16 114.4 c=17 131.2 c=18 144.4
//   G2 2^24: c=14 478.8 c=15 446.9 c=16 407.7 c=17 422.2 c=18 434.5 c=19 461.6 c=20 494.3
//   fixed-base G1 2^22: c=16 33.6 c=18 33.0 c=19 31.5 c=20 29.3 c=21 32.2 c=22 34.6
//   fixed-base G1 2^24: c=16 127.6 c=18 122.3 c=19 117.8 c=20 106.4 c=21 111.3 c=22 105.5
//   fixed-base G2 2^22: c=16 104.7 c=18 102.4 c=19 98.3 c=20 95.7 c=21 105.4 c=22 111.7
//   fixed-base G2 2^24: c=16 398.0 c=18 380.6 c=19 359.5 c=20 336.4 c=21 351.2 c=22 350.3
// The cost model, in pairs (a pair: one digit decomposed, sorted and accumulated):
//   per window width: windows(c) * (n * (1 + sort_pass_cost * radix_passes(c)) + window_cost
//                     + bucket_cost * 2^(c-1));
//   over a fixed-base table of k bucket sets (k sorts of windows(c) * n pairs in all):
//                     windows(c) * n * (1 + sort_pass_cost * radix_passes(c)) + window_cost
//                     + fixed_base_bucket_cost * 2^(c-1) + (k - 1) * extra_set_bucket_cost * 2^(c-1).
// CUB sorts c-bit keys in ceil(c / 8) passes, so c = 17 pays a third pass that c = 16 does not.
// Least squares on the G1 sweeps (relative errors) gives sort_pass_cost 0.067, window_cost 2.4e5
// and bucket_cost 24: the best width at 2^22, 2^24 and 2^26 (16, 16, 20) and 13 at 2^20 (8 % over
// c = 16's 11.7 ms). fixed_base_bucket_cost = 12 picks 20 at 2^22 and 22 at 2^24, the best of
// both fixed-base sweeps. extra_set_bucket_cost = 8 is a second set's measured cost over a table
// at c = 22 (kernels/bench/h100-20261205b/call4, ms more than one set: G1 6.2 at 2^24 and 5.7 at
// 2^22, G2 22.2 and 15.8, i.e. 7.7, 7.1, 9.6 and 6.9 pairs a bucket at the G1 and G2 pair rates of
// engine/groth16/cuda_backend.cpp). The history is in kernels/README.md.
struct GpuMsmPolicy {
  static constexpr int scalar_bits = 255;
  static constexpr int min_window_bits = 4;
  static constexpr int max_window_bits = 22;
  // Sorted pairs each accumulating thread adds (its chunk of the bucket sets' lists end to end).
  static constexpr uint32_t chunk_points = 128;
  // Each fold pass turns up to fold_factor segment sums of a bucket into one (fold_sums_kernel).
  // fold_passes(most): the passes that bring a bucket of `most` segment sums down to at most
  // reduce_segments, which the range reduction then adds in turn.
  static constexpr uint32_t fold_factor = 16;
  static constexpr uint32_t reduce_segments = 4;
  static constexpr int fold_passes(size_t most_segments) {
    int passes = 0;
    for (; most_segments > reduce_segments; most_segments = (most_segments + fold_factor - 1) / fold_factor) ++passes;
    return passes;
  }
  // The bucket reduction's threads: one per range of range_buckets buckets, and at least
  // reduction_threads over all windows together (ranges shrink where buckets are few).
  static constexpr uint32_t range_buckets = 32;
  static constexpr uint32_t reduction_threads = 1u << 15;
  // The accumulating kernel's launch shape, threads a block and blocks an SM, which caps its
  // registers at 65536 / (threads x blocks). On the H200 at 2^24 (kernels/README.md), G1's (48-byte
  // coordinates) is best at 128 x 3: 154 registers, no spills, 4.8 % faster than 256 x 2 (128
  // registers, 72 bytes of spill stores) and 8 % faster than 256 x 1. G2's (96-byte coordinates)
  // at 256 x 1: 255 registers, 8 bytes of spills, 5.4 % faster than 256 x 2 (3,544 bytes of spill
  // stores) and 6 % faster than 128 x 3 (168 registers, 2,320 bytes).
  struct LaunchShape {
    int threads, blocks_per_sm;
  };
  static constexpr LaunchShape accumulate_shape(size_t coordinate_bytes) {
    return coordinate_bytes > 48 ? LaunchShape{256, 1} : LaunchShape{128, 3};
  }
  // The cost model's terms, in pairs, fitted above.
  static constexpr double sort_pass_cost = 0.067;
  static constexpr double window_cost = 2.4e5;
  static constexpr double bucket_cost = 24.0;
  static constexpr double fixed_base_bucket_cost = 12.0;
  static constexpr double extra_set_bucket_cost = 8.0;

  static ZK_HD_CONSTEXPR int windows(int c) { return (scalar_bits + 1 + c - 1) / c; }
  // The rows of a fixed-base table of `sets` bucket sets (its windows per set).
  static int table_rows(int c, int sets) { return (windows(c) + sets - 1) / sets; }
  static int radix_passes(int c) { return (c + 7) / 8; }
  // The cost model's cheapest window width for n scalars, per window or over a fixed-base table
  // (of one set: a table of more sets keeps the width of one).
  static int window_bits(size_t n) { return cheapest_window(n, 0); }
  static int fixed_base_window_bits(size_t n) { return cheapest_window(n, 1); }
  // The cost model's cost, in pairs, of an MSM of n scalars with c-bit windows, per window
  // (table_sets 0) or over a fixed-base table of table_sets bucket sets.
  static double cost(size_t n, int c, int table_sets) {
    const double buckets = double(size_t{1} << (c - 1));
    const double pairs = windows(c) * double(n) * (1 + sort_pass_cost * radix_passes(c));
    if (table_sets == 0) return pairs + windows(c) * (window_cost + bucket_cost * buckets);
    return pairs + window_cost + (fixed_base_bucket_cost + (table_sets - 1) * extra_set_bucket_cost) * buckets;
  }

 private:
  static int cheapest_window(size_t n, int table_sets) {
    int best = min_window_bits;
    double best_cost = cost(n, best, table_sets);
    for (int c = min_window_bits + 1; c <= max_window_bits; ++c)
      if (const double c_cost = cost(n, c, table_sets); c_cost < best_cost) best = c, best_cost = c_cost;
    return best;
  }
};

// How an MSM's digits meet its bases: window w's digits go to bucket set w mod k, over row w / k
// of a table whose row r holds the bases times 2^offset(k r). per_window() is k = windows (one set a
// window, over the bases themselves: the table's one row); fixed_base(k) is k sets over a
// CudaFixedBases table of k sets, so k = 1 reduces one bucket set and needs no doubling.
// Windows are c bits wide, but over a table of one set the first windows(c) * c - 256 (at most all)
// are c - 1 bits: uniform windows would leave the top one the scalar's last 256 - (windows(c) - 1) c
// bits (14 at c = 22), whose digits crowd into that many bits' buckets (2^24 digits in 2^13 buckets
// at 2^24: a fold pass for every MSM). Windows of several sets keep one width, as each set's windows
// must stand the same distance from their row's.
struct DigitLayout {
  int table_sets = 0;  // k over a fixed-base table; 0: per window
  static constexpr DigitLayout per_window() { return {0}; }
  static constexpr DigitLayout fixed_base(int sets = 1) { return {sets}; }
  bool over_table() const { return table_sets > 0; }
  int sets(int windows) const { return table_sets > 0 ? std::min(table_sets, windows) : windows; }
  // The (c - 1)-bit windows at the bottom, and window w's first bit and width.
  ZK_HD int narrow_windows(int c) const {
    const int windows = GpuMsmPolicy::windows(c), spare_bits = windows * c - (GpuMsmPolicy::scalar_bits + 1);
    return table_sets != 1 ? 0 : spare_bits < windows ? spare_bits : windows;
  }
  ZK_HD int window_offset(int c, int w) const {
    const int narrow = narrow_windows(c);
    return w * c - (w < narrow ? w : narrow);
  }
  ZK_HD int window_width(int c, int w) const { return w < narrow_windows(c) ? c - 1 : c; }
  // The first bit of a fixed-base table's row r: its bases are the key's times 2^row_offset.
  int row_offset(int c, int r) const { return window_offset(c, r * sets(GpuMsmPolicy::windows(c))); }
  friend bool operator==(const DigitLayout&, const DigitLayout&) = default;
};

// Device views of n scalars' sorted digits (steps 1 and 2), as the bucket steps read them. The
// pair of window w = k r + s and scalar i is (bucket of set s, entry r * n + i | sign bit), k the
// layout's sets.
struct SortedDigits {
  size_t n = 0;
  int window_bits = 0;
  DigitLayout layout = DigitLayout::per_window();
  const uint32_t* sorted_points = nullptr;   // each bucket set's pairs' entries by bucket, sets end to end
  const uint32_t* bucket_sizes = nullptr;    // sets * 2^(c-1) buckets, then a zero
  const uint64_t* bucket_ends = nullptr;     // where each bucket's pairs end in sorted_points
  const uint32_t* segment_starts = nullptr;  // first segment of each bucket, then the total
  const uint32_t* most_segments = nullptr;   // the most segments any one bucket has (one value)
};

// Steps 1 and 2 of an MSM for any curve: the scalars' Booth digits, sorted by bucket, and the
// bucket and segment bounds. sorted() stays valid until the next compute().
class CudaMsmDigits {
 public:
  // Device bytes compute() of n scalars takes with `window_bits` (0: the policy's choice).
  static size_t workspace_bytes(size_t n, int window_bits = 0, DigitLayout layout = DigitLayout::per_window());
  // Decomposes the device-resident d_scalars[0, n) (Montgomery form); queued on `stream`, whose
  // later work may read sorted().
  void compute(const Fr* d_scalars, size_t n, cudaStream_t stream, int window_bits = 0,
               DigitLayout layout = DigitLayout::per_window());
  // Allocates now what compute() of up to n scalars takes, so that no such call allocates.
  void reserve(size_t n, int window_bits = 0, DigitLayout layout = DigitLayout::per_window());
  const SortedDigits& sorted() const { return sorted_; }

 private:
  cuda::DeviceBuffer<uint8_t> workspace_;
  SortedDigits sorted_;
};

// A fixed-base table of k sets: bases[i] * 2^offset(k r) for i < n and each row r < ceil(windows / k)
// of c-bit digits (offset: DigitLayout::row_offset, c k r for k > 1), affine, row r at
// table()[r * n]. Built once on the GPU (per row, as many doublings of the row before as the bits
// between them, and a batched conversion to affine), it turns every MSM over these bases into k
// bucket sets: one with a row for every window, two with half the rows.
template <class Curve>
class CudaFixedBases {
 public:
  using Affine = ec::affine_t<Curve>;

  // Device bytes of the table of n bases with c-bit windows and k sets (its build takes n
  // Jacobian points more).
  static size_t table_bytes(size_t n, int window_bits, int sets = 1);
  // Builds the table of the device-resident d_bases[0, n) (0 bits: the policy's fixed-base
  // window); queued on `stream`.
  void build(const Affine* d_bases, size_t n, cudaStream_t stream, int window_bits = 0, int sets = 1);
  const Affine* table() const { return table_.get(); }
  size_t n() const { return n_; }
  int window_bits() const { return window_bits_; }
  int sets() const { return sets_; }
  size_t bytes() const { return table_.bytes(); }

 private:
  cuda::DeviceBuffer<Affine> table_;
  size_t n_ = 0;
  int window_bits_ = 0, sets_ = 1;
};

template <class Curve>
class CudaMsm {
 public:
  using Affine = ec::affine_t<Curve>;
  using Point = ec::jacobian_t<Curve>;

  // Device bytes msm() of n scalars takes with `window_bits` (0: the policy's choice for
  // `layout`), per window or over a fixed-base table.
  static size_t workspace_bytes(size_t n, int window_bits = 0, DigitLayout layout = DigitLayout::per_window());
  // Device bytes sum() of n points takes.
  static size_t sum_workspace_bytes(size_t n);
  // Allocates now what msm() of up to n scalars in `layout` (with its own decomposition where
  // `from_scalars`: the calls that take scalars rather than digits) and sum() of up to n points
  // take, so that no such call allocates.
  void reserve(size_t n, bool from_scalars, int window_bits = 0, DigitLayout layout = DigitLayout::per_window());

  // sum_i scalars[i] * bases[base_index ? base_index[i] : i] for i < n. All pointers are device
  // pointers; the call returns when the result is on the host.
  Point msm(const Affine* d_bases, const uint32_t* d_base_index, const Fr* d_scalars, size_t n,
            cudaStream_t stream, int window_bits = 0);
  // The same MSM over scalars already decomposed (digits.n of them, digits computed on `stream`
  // or complete before it).
  Point msm(const Affine* d_bases, const uint32_t* d_base_index, const SortedDigits& digits, cudaStream_t stream);
  // The same MSMs over a fixed-base table of the bases: from scalars (decomposed at the table's
  // window), or from digits of the table's layout (fixed_base of its sets) at its window.
  Point msm(const CudaFixedBases<Curve>& table, const uint32_t* d_base_index, const Fr* d_scalars, size_t n,
            cudaStream_t stream);
  Point msm(const CudaFixedBases<Curve>& table, const uint32_t* d_base_index, const SortedDigits& digits,
            cudaStream_t stream);
  // sum_i bases[base_index ? base_index[i] : i] for i < n.
  Point sum(const Affine* d_bases, const uint32_t* d_base_index, size_t n, cudaStream_t stream);

 private:
  // Steps 3-5 on `digits`, the entry of each pair read by `bases`.
  template <class Bases>
  Point bucket_steps(const Bases& bases, const SortedDigits& digits, cudaStream_t stream);

  CudaMsmDigits digits_;                  // the one-shot msm()'s own decomposition
  cuda::DeviceBuffer<uint8_t> workspace_;  // steps 3-5, and the batch addition
};

extern template class CudaMsm<bls12_381::G1Curve>;
extern template class CudaMsm<bls12_381::G2Curve>;
extern template class CudaFixedBases<bls12_381::G1Curve>;
extern template class CudaFixedBases<bls12_381::G2Curve>;

}  // namespace zk::msm
