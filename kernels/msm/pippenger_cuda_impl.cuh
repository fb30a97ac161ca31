// pippenger_cuda_impl.cuh — the GPU MSM's kernels and launchers (contract in pippenger_cuda.cuh);
// included once per curve by pippenger_cuda_g1.cu and pippenger_cuda_g2.cu, which instantiate it
// (two translation units so the two large instantiations compile in parallel).
#pragma once
#include "kernels/ec/xyzz.hpp"
#include "kernels/msm/pippenger_cuda.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <bit>
#include <vector>

namespace zk::msm {
namespace {

constexpr uint32_t kSignBit = 1u << 31;
constexpr int kSumThreads = 128;  // threads of a tree-reduction block (G2: 36 KiB of shared memory)
constexpr int kThreads = 256;

using cuda::blocks_for;

// Regions of one workspace allocation, 256-byte aligned. With a null base it only measures.
class Carver {
 public:
  explicit Carver(uint8_t* base) : base_(base) {}
  template <class T>
  T* take(size_t count) {
    offset_ = (offset_ + 255) & ~size_t{255};
    T* p = base_ ? reinterpret_cast<T*>(base_ + offset_) : nullptr;
    offset_ += count * sizeof(T);
    return p;
  }
  size_t bytes() const { return offset_; }

 private:
  uint8_t* base_;
  size_t offset_ = 0;
};

// The sizes of an MSM of n scalars with c-bit windows and the given digit layout.
struct MsmShape {
  size_t n;
  int c, windows;
  int sets;          // bucket sets: one per window, or the fixed-base table's
  int rows;          // windows per set (the table's rows), the last row padded with zero digits
  size_t set_pairs;  // (bucket, entry) pairs per set, zero digits included
  uint32_t buckets_per_set, ranges_per_set;
  uint32_t range_sums_per_block;  // range sums each block of the reduction's first tree level adds
  size_t buckets, pairs, chunks, max_segments;
  int most_fold_passes;  // fold passes where one bucket has a segment in every chunk (the most)

  MsmShape(size_t n_, int c_, DigitLayout layout) : n(n_), c(c_) {
    windows = GpuMsmPolicy::windows(c);
    sets = layout.sets(windows);
    rows = GpuMsmPolicy::table_rows(c, sets);
    set_pairs = size_t(rows) * n;
    pairs = size_t(sets) * set_pairs;
    buckets_per_set = 1u << (c - 1);
    buckets = size_t(sets) * buckets_per_set;
    const uint32_t ranges = std::max<uint32_t>(GpuMsmPolicy::reduction_threads / sets,
                                               buckets_per_set / GpuMsmPolicy::range_buckets);
    ranges_per_set = std::min(buckets_per_set, std::bit_floor(std::max<uint32_t>(1, ranges)));
    range_sums_per_block = std::min<uint32_t>(ranges_per_set, 256);
    chunks = (pairs + GpuMsmPolicy::chunk_points - 1) / GpuMsmPolicy::chunk_points;
    max_segments = chunks + buckets;  // a bucket's segments: the chunks it touches
    most_fold_passes = GpuMsmPolicy::fold_passes((set_pairs + GpuMsmPolicy::chunk_points - 1) / GpuMsmPolicy::chunk_points + 1);
  }
};

// Temporary bytes of CUB's exclusive sum over the bucket counts (buckets + 1 of them).
size_t bucket_scan_temp_bytes(size_t buckets) {
  size_t bytes = 0;
  CUDA_OK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, (uint32_t*)nullptr, (uint32_t*)nullptr, buckets + 1));
  return bytes;
}

// The device regions of steps 3-5 (the digits' regions belong to CudaMsmDigits).
template <class Curve>
struct BucketLayout : MsmShape {
  using Point = ec::jacobian_t<Curve>;
  using Sum = ec::xyzz_t<Curve>;
  uint32_t* fold_counts;       // folded sums per bucket, then a zero
  uint32_t* fold_starts[2];    // the fold passes' bucket bounds, alternating
  uint32_t* fold_owners;       // each folded sum's bucket
  Sum *segment_sums, *folded_sums;
  Point *range_sums, *range_block_sums, *set_sums;
  void* scan_temp;
  size_t scan_temp_bytes;
  size_t bytes;

  BucketLayout(size_t n_, int c_, DigitLayout layout, uint8_t* base) : MsmShape(n_, c_, layout) {
    scan_temp_bytes = bucket_scan_temp_bytes(buckets);
    Carver carve(base);
    fold_counts = carve.take<uint32_t>(buckets + 1);
    fold_starts[0] = carve.take<uint32_t>(buckets + 1);
    fold_starts[1] = carve.take<uint32_t>(buckets + 1);
    fold_owners = carve.take<uint32_t>(most_fold_passes ? max_segments : 0);
    segment_sums = carve.take<Sum>(max_segments);
    folded_sums = carve.take<Sum>(most_fold_passes ? max_segments : 0);
    range_sums = carve.take<Point>(size_t(sets) * ranges_per_set);
    range_block_sums = carve.take<Point>(size_t(sets) * (ranges_per_set / range_sums_per_block));
    set_sums = carve.take<Point>(sets);
    scan_temp = carve.take<uint8_t>(scan_temp_bytes);
    bytes = carve.bytes();
  }
};

// The first bucket whose pairs end after `position` (buckets when none does).
__device__ __forceinline__ size_t first_bucket_ending_after(const uint64_t* ends, size_t buckets, uint64_t position) {
  size_t lo = 0, hi = buckets;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ends[mid] > position) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// The accumulating kernel's launch shape for the curve's coordinates.
template <class Curve>
constexpr GpuMsmPolicy::LaunchShape kAccumulateShape = GpuMsmPolicy::accumulate_shape(sizeof(typename Curve::field));

// 3. One thread per chunk of chunk_points sorted pairs (the bucket sets' lists end to end): it adds
// its pairs bucket by bucket and, where a bucket's run in the chunk ends, stores the run's sum as
// that bucket's segment (a bucket's segments are the chunks it touches, in order). One flat loop
// over the chunk keeps a warp's threads in step whatever their buckets' bounds; a run's end costs a
// store of the XYZZ sum (the folds and the reduction add XYZZ sums too). Registers
// are capped so that the curve's GpuMsmPolicy::accumulate_shape fits an SM (see there).
template <class Curve, class Bases>
__global__ void __launch_bounds__(kAccumulateShape<Curve>.threads, kAccumulateShape<Curve>.blocks_per_sm)
    accumulate_kernel(Bases bases, const uint32_t* sorted_points,
                      size_t pairs, size_t buckets, const uint32_t* bucket_sizes, const uint64_t* bucket_ends,
                      const uint32_t* segment_starts, ec::xyzz_t<Curve>* segment_sums) {
  constexpr uint64_t chunk_points = GpuMsmPolicy::chunk_points;
  const uint64_t begin = (blockIdx.x * uint64_t(blockDim.x) + threadIdx.x) * chunk_points;
  if (begin >= pairs) return;
  const uint64_t end = min(begin + chunk_points, uint64_t(pairs));
  size_t bucket = first_bucket_ending_after(bucket_ends, buckets, begin);
  uint64_t bucket_begin = ~uint64_t{0}, bucket_end = ~uint64_t{0};
  auto enter = [&] {  // the first non-empty bucket from `bucket` on, if any
    while (bucket < buckets && bucket_sizes[bucket] == 0) ++bucket;
    if (bucket < buckets) bucket_end = bucket_ends[bucket], bucket_begin = bucket_end - bucket_sizes[bucket];
    else bucket_begin = bucket_end = ~uint64_t{0};
  };
  enter();
  uint64_t run_begin = max(begin, bucket_begin);
  ec::xyzz_t<Curve> acc = ec::xyzz_t<Curve>::infinity();
  for (uint64_t p = begin; p < end; ++p) {
    const bool in_bucket = p >= bucket_begin;
    if (in_bucket) {
      const uint32_t entry = sorted_points[p];
      const ec::affine_t<Curve> base = bases(entry & ~kSignBit);
      acc += (entry & kSignBit) ? -base : base;
    }
    const uint64_t next = p + 1;
    if (in_bucket && (next == bucket_end || next == end)) {
      segment_sums[segment_starts[bucket] + run_begin / chunk_points - bucket_begin / chunk_points] = acc;
      acc = ec::xyzz_t<Curve>::infinity();
      if (next == bucket_end) {
        ++bucket;
        enter();
        run_begin = max(next, bucket_begin);
      }
    }
  }
}

// 3a. Folding: a bucket's segment sums, in groups of fold_factor, become one sum each; repeated
// until every bucket has at most one, so a bucket holding most points (skewed scalars, or the top
// window's few buckets) is summed by a tree rather than by one thread.
__global__ void fold_counts_kernel(const uint32_t* starts, size_t buckets, uint32_t* folded_counts) {
  size_t b = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (b < buckets)
    folded_counts[b] = (starts[b + 1] - starts[b] + GpuMsmPolicy::fold_factor - 1) / GpuMsmPolicy::fold_factor;
}

// Each folded sum's bucket, written by the bucket's thread, so that a fold thread finds its bucket
// in one load rather than by searching the bounds (~21 dependent loads at 2^21 buckets).
__global__ void fold_owners_kernel(const uint32_t* folded_starts, size_t buckets, uint32_t* owners) {
  const size_t b = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (b >= buckets) return;
  for (uint32_t s = folded_starts[b]; s < folded_starts[b + 1]; ++s) owners[s] = static_cast<uint32_t>(b);
}

template <class Curve>
__global__ void fold_sums_kernel(const ec::xyzz_t<Curve>* sums, const uint32_t* starts, size_t buckets,
                                 const uint32_t* folded_starts, const uint32_t* owners,
                                 ec::xyzz_t<Curve>* folded_sums) {
  using Sum = ec::xyzz_t<Curve>;
  const size_t segment = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (segment >= folded_starts[buckets]) return;
  const size_t bucket = owners[segment];
  const size_t begin = starts[bucket] + (segment - folded_starts[bucket]) * GpuMsmPolicy::fold_factor;
  const size_t end = min(begin + GpuMsmPolicy::fold_factor, size_t(starts[bucket + 1]));
  Sum acc = Sum::infinity();
  for (size_t i = begin; i < end; ++i) acc += sums[i];
  folded_sums[segment] = acc;
}

// 4a. One thread per range of buckets [lo, hi) of a bucket set: bucket b (0-based) weighs b + 1;
// a bucket's segment sums (at most GpuMsmPolicy::reduce_segments) are added in turn, in XYZZ.
template <class Curve>
__global__ void reduce_ranges_kernel(const ec::xyzz_t<Curve>* segment_sums, const uint32_t* segment_starts,
                                     int sets, uint32_t buckets_per_set, uint32_t ranges_per_set,
                                     ec::jacobian_t<Curve>* range_sums) {
  using Sum = ec::xyzz_t<Curve>;
  const size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (t >= size_t(sets) * ranges_per_set) return;
  const size_t set = t / ranges_per_set, r = t % ranges_per_set;
  const uint64_t lo = r * buckets_per_set / ranges_per_set;
  const uint64_t hi = (r + 1) * buckets_per_set / ranges_per_set;
  Sum running = Sum::infinity(), weighted = Sum::infinity();
  for (uint64_t b = hi; b-- > lo;) {
    const size_t bucket = set * buckets_per_set + b;
    for (uint32_t s = segment_starts[bucket]; s < segment_starts[bucket + 1]; ++s) running += segment_sums[s];
    weighted += running;
  }
  // weighted = sum (b - lo + 1) bucket_b; the range's buckets each weigh lo more.
  range_sums[t] = weighted.to_jacobian() + running.to_jacobian().mul(&lo, 1);
}

// A block per segment [s*length, min((s+1)*length, count)): out[s] = the segment's sum.
template <class Curve, class Source>
__global__ void sum_segments_kernel(Source source, size_t count, size_t length, ec::jacobian_t<Curve>* out) {
  using Point = ec::jacobian_t<Curve>;
  __shared__ Point partial[kSumThreads];
  const size_t begin = blockIdx.x * length, end = min(begin + length, count);
  Point acc = Point::infinity();
  for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) acc = acc + source(i);
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = kSumThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = partial[threadIdx.x] + partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

// The bases of an MSM's pairs (per_window: entry i) and of a batch addition.
template <class Curve>
struct SelectedBases {
  const ec::affine_t<Curve>* bases;
  const uint32_t* index;
  __device__ ec::affine_t<Curve> operator()(size_t i) const { return bases[index ? index[i] : i]; }
};
// The bases of a fixed-base MSM's pairs: entry r * n + i is row r of the table at base i.
template <class Curve>
struct FixedBaseRows {
  const ec::affine_t<Curve>* table;
  size_t table_n;
  const uint32_t* index;
  uint32_t n;
  __device__ ec::affine_t<Curve> operator()(uint32_t entry) const {
    const uint32_t r = entry / n, i = entry - r * n;
    return table[r * table_n + (index ? index[i] : i)];
  }
};
template <class Curve>
struct PointArray {
  const ec::jacobian_t<Curve>* points;
  __device__ ec::jacobian_t<Curve> operator()(size_t i) const { return points[i]; }
};

int device_multiprocessors() {
  int device = 0, sms = 0;
  CUDA_OK(cudaGetDevice(&device));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// Blocks of a tree reduction's first level: enough to fill the GPU, each with >= 8 points a thread.
size_t sum_blocks(size_t n) {
  static const size_t target = 4 * size_t(device_multiprocessors());
  return std::max<size_t>(1, std::min(target, blocks_for(n, 8 * kSumThreads)));
}

// The batch addition's chains: as many as the accumulating kernel's launch shape keeps resident on
// the GPU at once, each of at least kLeastChainPoints bases.
constexpr size_t kLeastChainPoints = 32;
template <class Curve>
size_t sum_chains(size_t n) {
  static const size_t resident = size_t(device_multiprocessors()) * kAccumulateShape<Curve>.threads *
                                 kAccumulateShape<Curve>.blocks_per_sm;
  return std::max<size_t>(1, std::min(resident, n / kLeastChainPoints));
}

// The batch addition's first step: chain t sums bases t, t + chains, t + 2 chains, ... (a warp's
// index loads side by side) as the accumulation does, XYZZ plus affine, under its register cap.
template <class Curve>
__global__ void __launch_bounds__(kAccumulateShape<Curve>.threads, kAccumulateShape<Curve>.blocks_per_sm)
    sum_chains_kernel(SelectedBases<Curve> bases, size_t n, size_t chains, ec::jacobian_t<Curve>* chain_sums) {
  const size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (t >= chains) return;
  ec::xyzz_t<Curve> acc = ec::xyzz_t<Curve>::infinity();
  for (size_t i = t; i < n; i += chains) acc += bases(i);
  chain_sums[t] = acc.to_jacobian();
}

int resolve_window_bits(size_t n, int window_bits, DigitLayout layout = DigitLayout::per_window()) {
  const int c = window_bits          ? window_bits
                : layout.over_table() ? GpuMsmPolicy::fixed_base_window_bits(n)
                                      : GpuMsmPolicy::window_bits(n);
  if (c < 2 || c > 24) throw cuda::CudaError("GPU MSM: window bits must be in [2, 24]");
  return c;
}

// A fixed-base table's row r from row r - 1: each point doubled `doublings` times (the bits between
// the two rows' first windows; Jacobian, into `row`).
template <class Curve>
__global__ void double_row_kernel(const ec::affine_t<Curve>* previous, size_t n, int doublings,
                                  ec::jacobian_t<Curve>* row) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  ec::jacobian_t<Curve> p = ec::jacobian_t<Curve>::from_affine(previous[i]);
  for (int b = 0; b < doublings; ++b) p = p.dbl();
  row[i] = p;
}

// Jacobian points to affine, kToAffineRun consecutive points a thread sharing one inversion
// (Montgomery's trick; the running products kept in the outputs' x until the way back).
constexpr size_t kToAffineRun = 32;
template <class Curve>
__global__ void to_affine_kernel(const ec::jacobian_t<Curve>* points, size_t n, ec::affine_t<Curve>* out) {
  using Field = typename Curve::field;
  const size_t begin = (blockIdx.x * size_t(blockDim.x) + threadIdx.x) * kToAffineRun;
  if (begin >= n) return;
  const size_t end = min(begin + kToAffineRun, n);
  Field product = Field::one();
  for (size_t k = begin; k < end; ++k) {
    out[k].x = product;
    if (!points[k].is_infinity()) product = product * points[k].Z;
  }
  Field inverse = product.inverse();  // of the product of every finite point's Z
  for (size_t k = end; k-- > begin;) {
    const ec::jacobian_t<Curve>& p = points[k];
    if (p.is_infinity()) {
      out[k] = ec::affine_t<Curve>::infinity();
      continue;
    }
    const Field zi = inverse * out[k].x, zi2 = zi.sqr();
    inverse = inverse * p.Z;
    out[k] = {p.X * zi2, p.Y * zi2 * zi};
  }
}

}  // namespace

template <class Curve>
size_t CudaFixedBases<Curve>::table_bytes(size_t n, int window_bits, int sets) {
  const DigitLayout layout = DigitLayout::fixed_base(sets);
  return size_t(MsmShape(n, resolve_window_bits(n, window_bits, layout), layout).rows) * n * sizeof(Affine);
}

template <class Curve>
void CudaFixedBases<Curve>::build(const Affine* d_bases, size_t n, cudaStream_t stream, int window_bits, int sets) {
  if (sets < 1) throw cuda::CudaError("GPU MSM: a fixed-base table of at least one bucket set");
  const DigitLayout layout = DigitLayout::fixed_base(sets);
  const MsmShape shape(n, resolve_window_bits(n, window_bits, layout), layout);
  if (shape.set_pairs >= kSignBit) throw cuda::CudaError("GPU MSM: a fixed-base table of at most 2^31 - 1 points");
  table_.reserve(shape.set_pairs);
  n_ = n, window_bits_ = shape.c, sets_ = shape.sets;
  if (n == 0) return;
  cuda::DeviceBuffer<ec::jacobian_t<Curve>> row(n);
  CUDA_OK(cudaMemcpyAsync(table_.get(), d_bases, n * sizeof(Affine), cudaMemcpyDeviceToDevice, stream));
  for (int r = 1; r < shape.rows; ++r) {
    const int doublings = layout.row_offset(shape.c, r) - layout.row_offset(shape.c, r - 1);
    double_row_kernel<Curve><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(table_.get() + (r - 1) * n, n,
                                                                             doublings, row.get());
    CUDA_LAUNCH_OK();
    to_affine_kernel<Curve><<<blocks_for(blocks_for(n, kToAffineRun), 128), 128, 0, stream>>>(row.get(), n,
                                                                                             table_.get() + r * n);
    CUDA_LAUNCH_OK();
  }
  CUDA_OK(cudaStreamSynchronize(stream));  // before `row` is freed
}

template <class Curve>
size_t CudaMsm<Curve>::workspace_bytes(size_t n, int window_bits, DigitLayout layout) {
  const int c = resolve_window_bits(n, window_bits, layout);
  return CudaMsmDigits::workspace_bytes(n, c, layout) + BucketLayout<Curve>(n, c, layout, nullptr).bytes;
}

template <class Curve>
size_t CudaMsm<Curve>::sum_workspace_bytes(size_t n) {
  const size_t chains = sum_chains<Curve>(n);
  return (chains + sum_blocks(chains) + 1) * sizeof(Point);
}

template <class Curve>
void CudaMsm<Curve>::reserve(size_t n, bool from_scalars, int window_bits, DigitLayout layout) {
  const int c = resolve_window_bits(n, window_bits, layout);
  if (from_scalars) digits_.reserve(n, c, layout);
  workspace_.reserve(std::max(BucketLayout<Curve>(n, c, layout, nullptr).bytes, sum_workspace_bytes(n)));
}

template <class Curve>
typename CudaMsm<Curve>::Point CudaMsm<Curve>::msm(const Affine* d_bases, const uint32_t* d_base_index,
                                                   const Fr* d_scalars, size_t n, cudaStream_t stream,
                                                   int window_bits) {
  if (n == 0) return Point::infinity();
  digits_.compute(d_scalars, n, stream, window_bits);
  return msm(d_bases, d_base_index, digits_.sorted(), stream);
}

template <class Curve>
typename CudaMsm<Curve>::Point CudaMsm<Curve>::msm(const Affine* d_bases, const uint32_t* d_base_index,
                                                   const SortedDigits& digits, cudaStream_t stream) {
  if (digits.layout.over_table()) throw cuda::CudaError("GPU MSM: fixed-base digits need a fixed-base table");
  return bucket_steps(SelectedBases<Curve>{d_bases, d_base_index}, digits, stream);
}

template <class Curve>
typename CudaMsm<Curve>::Point CudaMsm<Curve>::msm(const CudaFixedBases<Curve>& table, const uint32_t* d_base_index,
                                                   const Fr* d_scalars, size_t n, cudaStream_t stream) {
  if (n == 0) return Point::infinity();
  digits_.compute(d_scalars, n, stream, table.window_bits(), DigitLayout::fixed_base(table.sets()));
  return msm(table, d_base_index, digits_.sorted(), stream);
}

template <class Curve>
typename CudaMsm<Curve>::Point CudaMsm<Curve>::msm(const CudaFixedBases<Curve>& table, const uint32_t* d_base_index,
                                                   const SortedDigits& digits, cudaStream_t stream) {
  if (digits.layout != DigitLayout::fixed_base(table.sets()) || digits.window_bits != table.window_bits())
    throw cuda::CudaError("GPU MSM: a fixed-base table needs fixed-base digits of its sets at its window");
  if (!d_base_index && digits.n > table.n())
    throw cuda::CudaError("GPU MSM: more scalars than the fixed-base table has bases");
  return bucket_steps(FixedBaseRows<Curve>{table.table(), table.n(), d_base_index, static_cast<uint32_t>(digits.n)},
                      digits, stream);
}

template <class Curve>
template <class Bases>
typename CudaMsm<Curve>::Point CudaMsm<Curve>::bucket_steps(const Bases& bases, const SortedDigits& digits,
                                                            cudaStream_t stream) {
  const size_t n = digits.n;
  if (n == 0) return Point::infinity();
  const int c = digits.window_bits;
  workspace_.reserve(BucketLayout<Curve>(n, c, digits.layout, nullptr).bytes);
  BucketLayout<Curve> L(n, c, digits.layout, workspace_.get());

  constexpr int accumulate_threads = kAccumulateShape<Curve>.threads;
  accumulate_kernel<Curve><<<blocks_for(L.chunks, accumulate_threads), accumulate_threads, 0, stream>>>(
      bases, digits.sorted_points, L.pairs, L.buckets, digits.bucket_sizes, digits.bucket_ends, digits.segment_starts,
      L.segment_sums);
  CUDA_LAUNCH_OK();
  uint32_t most_segments = 0;  // as the digits found them: the accumulation is queued before the wait
  CUDA_OK(cudaMemcpyAsync(&most_segments, digits.most_segments, sizeof most_segments, cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  const int fold_passes = GpuMsmPolicy::fold_passes(most_segments);
  auto *sums = L.segment_sums, *folded_sums = L.folded_sums;
  const uint32_t* starts = digits.segment_starts;
  size_t max_sums = L.max_segments;
  if (fold_passes) CUDA_OK(cudaMemsetAsync(L.fold_counts + L.buckets, 0, sizeof(uint32_t), stream));
  for (int pass = 0; pass < fold_passes; ++pass) {
    uint32_t* folded_starts = L.fold_starts[pass % 2];
    fold_counts_kernel<<<blocks_for(L.buckets, kThreads), kThreads, 0, stream>>>(starts, L.buckets, L.fold_counts);
    CUDA_LAUNCH_OK();
    size_t scan_bytes = L.scan_temp_bytes;
    CUDA_OK(cub::DeviceScan::ExclusiveSum(L.scan_temp, scan_bytes, L.fold_counts, folded_starts, L.buckets + 1, stream));
    fold_owners_kernel<<<blocks_for(L.buckets, kThreads), kThreads, 0, stream>>>(folded_starts, L.buckets, L.fold_owners);
    CUDA_LAUNCH_OK();
    max_sums = std::min(L.max_segments, (max_sums + GpuMsmPolicy::fold_factor - 1) / GpuMsmPolicy::fold_factor + L.buckets);
    fold_sums_kernel<Curve><<<blocks_for(max_sums, kThreads), kThreads, 0, stream>>>(sums, starts, L.buckets,
                                                                                   folded_starts, L.fold_owners, folded_sums);
    CUDA_LAUNCH_OK();
    std::swap(sums, folded_sums);
    starts = folded_starts;
  }
  const size_t range_threads = size_t(L.sets) * L.ranges_per_set;
  reduce_ranges_kernel<Curve><<<blocks_for(range_threads, 128), 128, 0, stream>>>(
      sums, starts, L.sets, L.buckets_per_set, L.ranges_per_set, L.range_sums);
  CUDA_LAUNCH_OK();
  // The range sums of each set by a tree: blocks of range_sums_per_block, then a block per set.
  const size_t block_sums = range_threads / L.range_sums_per_block;
  sum_segments_kernel<Curve><<<block_sums, kSumThreads, 0, stream>>>(PointArray<Curve>{L.range_sums}, range_threads,
                                                                     L.range_sums_per_block, L.range_block_sums);
  CUDA_LAUNCH_OK();
  sum_segments_kernel<Curve><<<L.sets, kSumThreads, 0, stream>>>(PointArray<Curve>{L.range_block_sums}, block_sums,
                                                                 block_sums / L.sets, L.set_sums);
  CUDA_LAUNCH_OK();

  // The sets' sums meet by doubling (Horner), set s weighing 2^(c s): a window's set, or a table's.
  std::vector<Point> set_sums(L.sets);
  CUDA_OK(cudaMemcpyAsync(set_sums.data(), L.set_sums, L.sets * sizeof(Point), cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  Point result = Point::infinity();
  for (int w = L.sets; w-- > 0;) {
    for (int b = 0; b < c; ++b) result = result.dbl();
    result += set_sums[w];
  }
  return result;
}

template <class Curve>
typename CudaMsm<Curve>::Point CudaMsm<Curve>::sum(const Affine* d_bases, const uint32_t* d_base_index, size_t n,
                                                   cudaStream_t stream) {
  if (n == 0) return Point::infinity();
  // Chains of the bases, then a tree of the chains' sums: blocks, then one block.
  const size_t chains = sum_chains<Curve>(n), blocks = sum_blocks(chains);
  workspace_.reserve(sum_workspace_bytes(n));
  Point* chain_sums = reinterpret_cast<Point*>(workspace_.get());
  Point* block_sums = chain_sums + chains;
  Point* total = block_sums + blocks;
  constexpr unsigned threads = kAccumulateShape<Curve>.threads;
  sum_chains_kernel<Curve><<<unsigned(blocks_for(chains, threads)), threads, 0, stream>>>(
      SelectedBases<Curve>{d_bases, d_base_index}, n, chains, chain_sums);
  CUDA_LAUNCH_OK();
  sum_segments_kernel<Curve><<<blocks, kSumThreads, 0, stream>>>(PointArray<Curve>{chain_sums}, chains,
                                                                 (chains + blocks - 1) / blocks, block_sums);
  CUDA_LAUNCH_OK();
  sum_segments_kernel<Curve><<<1, kSumThreads, 0, stream>>>(PointArray<Curve>{block_sums}, blocks, blocks, total);
  CUDA_LAUNCH_OK();
  Point result;
  CUDA_OK(cudaMemcpyAsync(&result, total, sizeof(Point), cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  return result;
}

}  // namespace zk::msm
