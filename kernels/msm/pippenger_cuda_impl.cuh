// pippenger_cuda_impl.cuh — the GPU MSM's kernels and launchers (contract in pippenger_cuda.cuh);
// included once per curve by pippenger_cuda_g1.cu and pippenger_cuda_g2.cu, which instantiate it
// (two translation units so the two large instantiations compile in parallel).
#pragma once
#include "kernels/ec/xyzz.hpp"
#include "kernels/msm/pippenger_cuda.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <vector>

namespace zk::msm {
namespace {

constexpr uint32_t kSignBit = 1u << 31;
constexpr int kSumThreads = 128;  // threads of a tree-reduction block (G2: 36 KiB of shared memory)
constexpr int kThreads = 256;

size_t blocks_for(size_t items, int threads) { return (items + threads - 1) / threads; }

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

// The sizes of an MSM of n scalars with c-bit windows.
struct MsmShape {
  size_t n;
  int c, windows;
  uint32_t buckets_per_window, ranges_per_window;
  size_t buckets, max_segments;
  int fold_levels;  // fold passes until no bucket has more than one segment

  MsmShape(size_t n_, int c_) : n(n_), c(c_) {
    windows = GpuMsmPolicy::windows(c);
    buckets_per_window = 1u << (c - 1);
    buckets = size_t(windows) * buckets_per_window;
    ranges_per_window = std::max<uint32_t>(
        1, std::min<uint32_t>(buckets_per_window, GpuMsmPolicy::reduction_threads / windows));
    max_segments = (size_t(windows) * n + GpuMsmPolicy::segment_points - 1) / GpuMsmPolicy::segment_points + buckets;
    fold_levels = 0;
    for (size_t most = (n + GpuMsmPolicy::segment_points - 1) / GpuMsmPolicy::segment_points; most > 1;
         most = (most + GpuMsmPolicy::fold_factor - 1) / GpuMsmPolicy::fold_factor)
      ++fold_levels;
  }
};

// Temporary bytes of CUB's exclusive sum over the bucket counts (buckets + 1 of them).
size_t bucket_scan_temp_bytes(size_t buckets) {
  size_t bytes = 0;
  CUDA_OK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, (uint32_t*)nullptr, (uint32_t*)nullptr, buckets + 1));
  return bytes;
}

// The device regions of steps 3-5 (the digits' regions belong to CudaMsmDigits).
template <class Point>
struct BucketLayout : MsmShape {
  uint32_t* fold_counts;       // folded sums per bucket, then a zero
  uint32_t* fold_starts[2];    // the fold passes' bucket bounds, alternating
  Point *segment_sums, *folded_sums, *range_sums, *window_sums;
  void* scan_temp;
  size_t scan_temp_bytes;
  size_t bytes;

  BucketLayout(size_t n_, int c_, uint8_t* base) : MsmShape(n_, c_) {
    scan_temp_bytes = bucket_scan_temp_bytes(buckets);
    Carver carve(base);
    fold_counts = carve.take<uint32_t>(buckets + 1);
    fold_starts[0] = carve.take<uint32_t>(buckets + 1);
    fold_starts[1] = carve.take<uint32_t>(buckets + 1);
    segment_sums = carve.take<Point>(max_segments);
    folded_sums = carve.take<Point>(fold_levels ? max_segments : 0);
    range_sums = carve.take<Point>(size_t(windows) * ranges_per_window);
    window_sums = carve.take<Point>(windows);
    scan_temp = carve.take<uint8_t>(scan_temp_bytes);
    bytes = carve.bytes();
  }
};

// The bucket that segment s belongs to: the largest b with starts[b] <= s.
__device__ __forceinline__ size_t bucket_of_segment(const uint32_t* starts, size_t buckets, size_t s) {
  size_t lo = 0, hi = buckets;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (starts[mid] <= s) lo = mid;
    else hi = mid;
  }
  return lo;
}

// 3. One thread per segment: its bucket by binary search over the segment starts. Registers are
// capped so that GpuMsmPolicy::accumulate_blocks_per_sm blocks fit an SM (see there).
template <class Curve>
__global__ void __launch_bounds__(kThreads, GpuMsmPolicy::accumulate_blocks_per_sm) accumulate_kernel(const ec::affine_t<Curve>* bases, const uint32_t* base_index,
                                  const uint32_t* sorted_points, size_t n, uint32_t buckets_per_window,
                                  size_t buckets, const uint32_t* bucket_sizes,
                                  const uint32_t* bucket_starts, const uint32_t* segment_starts,
                                  ec::jacobian_t<Curve>* segment_sums) {
  using Point = ec::jacobian_t<Curve>;
  const size_t segment = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (segment >= segment_starts[buckets]) return;
  const size_t bucket = bucket_of_segment(segment_starts, buckets, segment);
  const size_t window = bucket / buckets_per_window;
  const size_t bucket_begin = window * n + bucket_starts[bucket] - bucket_starts[window * buckets_per_window];
  const size_t begin = bucket_begin + (segment - segment_starts[bucket]) * GpuMsmPolicy::segment_points;
  const size_t end = min(begin + GpuMsmPolicy::segment_points, bucket_begin + bucket_sizes[bucket]);
  ec::xyzz_t<Curve> acc = ec::xyzz_t<Curve>::infinity();
  for (size_t p = begin; p < end; ++p) {
    const uint32_t entry = sorted_points[p], i = entry & ~kSignBit;
    const ec::affine_t<Curve> base = bases[base_index ? base_index[i] : i];
    acc += (entry & kSignBit) ? -base : base;
  }
  segment_sums[segment] = acc.to_jacobian();
}

// 3b. Folding: a bucket's segment sums, in groups of fold_factor, become one sum each; repeated
// until every bucket has at most one, so a bucket holding most points (skewed scalars, or the top
// window's few buckets) is summed by a tree rather than by one thread.
__global__ void fold_counts_kernel(const uint32_t* starts, size_t buckets, uint32_t* folded_counts) {
  size_t b = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (b < buckets)
    folded_counts[b] = (starts[b + 1] - starts[b] + GpuMsmPolicy::fold_factor - 1) / GpuMsmPolicy::fold_factor;
}

template <class Curve>
__global__ void fold_sums_kernel(const ec::jacobian_t<Curve>* sums, const uint32_t* starts, size_t buckets,
                                 const uint32_t* folded_starts, ec::jacobian_t<Curve>* folded_sums) {
  using Point = ec::jacobian_t<Curve>;
  const size_t segment = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (segment >= folded_starts[buckets]) return;
  const size_t bucket = bucket_of_segment(folded_starts, buckets, segment);
  const size_t begin = starts[bucket] + (segment - folded_starts[bucket]) * GpuMsmPolicy::fold_factor;
  const size_t end = min(begin + GpuMsmPolicy::fold_factor, size_t(starts[bucket + 1]));
  Point acc = Point::infinity();
  for (size_t i = begin; i < end; ++i) acc = acc + sums[i];
  folded_sums[segment] = acc;
}

// 4a. One thread per range of buckets [lo, hi) of a window: bucket b (0-based) weighs b + 1.
template <class Curve>
__global__ void reduce_ranges_kernel(const ec::jacobian_t<Curve>* segment_sums,
                                     const uint32_t* segment_starts, int windows,
                                     uint32_t buckets_per_window, uint32_t ranges_per_window,
                                     ec::jacobian_t<Curve>* range_sums) {
  using Point = ec::jacobian_t<Curve>;
  const size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (t >= size_t(windows) * ranges_per_window) return;
  const size_t w = t / ranges_per_window, r = t % ranges_per_window;
  const uint64_t lo = r * buckets_per_window / ranges_per_window;
  const uint64_t hi = (r + 1) * buckets_per_window / ranges_per_window;
  Point running = Point::infinity(), weighted = Point::infinity();
  for (uint64_t b = hi; b-- > lo;) {
    const size_t bucket = w * buckets_per_window + b;
    for (uint32_t s = segment_starts[bucket]; s < segment_starts[bucket + 1]; ++s)
      running = running + segment_sums[s];
    weighted = weighted + running;
  }
  // weighted = sum (b - lo + 1) bucket_b; the range's buckets each weigh lo more.
  range_sums[t] = weighted + running.mul(&lo, 1);
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

template <class Curve>
struct SelectedBases {
  const ec::affine_t<Curve>* bases;
  const uint32_t* index;
  __device__ ec::affine_t<Curve> operator()(size_t i) const { return bases[index ? index[i] : i]; }
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

// Blocks of the batch addition's first level: enough to fill the GPU, each with >= 8 points a thread.
size_t sum_blocks(size_t n) {
  static const size_t target = 4 * size_t(device_multiprocessors());
  return std::max<size_t>(1, std::min(target, blocks_for(n, 8 * kSumThreads)));
}

int resolve_window_bits(size_t n, int window_bits) {
  int c = window_bits ? window_bits : GpuMsmPolicy::window_bits(n);
  if (c < 2 || c > 24) throw cuda::CudaError("GPU MSM: window bits must be in [2, 24]");
  return c;
}

}  // namespace

template <class Curve>
size_t CudaMsm<Curve>::workspace_bytes(size_t n, int window_bits) {
  const int c = resolve_window_bits(n, window_bits);
  return CudaMsmDigits::workspace_bytes(n, c) + BucketLayout<Point>(n, c, nullptr).bytes;
}

template <class Curve>
size_t CudaMsm<Curve>::sum_workspace_bytes(size_t n) {
  return (sum_blocks(n) + 1) * sizeof(Point);
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
  const size_t n = digits.n;
  if (n == 0) return Point::infinity();
  const int c = digits.window_bits;
  workspace_.reserve(BucketLayout<Point>(n, c, nullptr).bytes);
  BucketLayout<Point> L(n, c, workspace_.get());

  accumulate_kernel<Curve><<<blocks_for(L.max_segments, kThreads), kThreads, 0, stream>>>(
      d_bases, d_base_index, digits.sorted_points, n, L.buckets_per_window, L.buckets, digits.bucket_sizes,
      digits.bucket_starts, digits.segment_starts, L.segment_sums);
  CUDA_LAUNCH_OK();
  Point *sums = L.segment_sums, *folded_sums = L.folded_sums;
  const uint32_t* starts = digits.segment_starts;
  size_t max_sums = L.max_segments;
  if (L.fold_levels) CUDA_OK(cudaMemsetAsync(L.fold_counts + L.buckets, 0, sizeof(uint32_t), stream));
  for (int level = 0; level < L.fold_levels; ++level) {
    uint32_t* folded_starts = L.fold_starts[level % 2];
    fold_counts_kernel<<<blocks_for(L.buckets, kThreads), kThreads, 0, stream>>>(starts, L.buckets, L.fold_counts);
    CUDA_LAUNCH_OK();
    size_t scan_bytes = L.scan_temp_bytes;
    CUDA_OK(cub::DeviceScan::ExclusiveSum(L.scan_temp, scan_bytes, L.fold_counts, folded_starts, L.buckets + 1, stream));
    max_sums = std::min(L.max_segments, (max_sums + GpuMsmPolicy::fold_factor - 1) / GpuMsmPolicy::fold_factor + L.buckets);
    fold_sums_kernel<Curve><<<blocks_for(max_sums, kThreads), kThreads, 0, stream>>>(sums, starts, L.buckets,
                                                                                   folded_starts, folded_sums);
    CUDA_LAUNCH_OK();
    std::swap(sums, folded_sums);
    starts = folded_starts;
  }
  const size_t range_threads = size_t(L.windows) * L.ranges_per_window;
  reduce_ranges_kernel<Curve><<<blocks_for(range_threads, 128), 128, 0, stream>>>(
      sums, starts, L.windows, L.buckets_per_window, L.ranges_per_window, L.range_sums);
  CUDA_LAUNCH_OK();
  sum_segments_kernel<Curve><<<L.windows, kSumThreads, 0, stream>>>(PointArray<Curve>{L.range_sums}, range_threads,
                                                                    L.ranges_per_window, L.window_sums);
  CUDA_LAUNCH_OK();

  std::vector<Point> window_sums(L.windows);
  CUDA_OK(cudaMemcpyAsync(window_sums.data(), L.window_sums, L.windows * sizeof(Point), cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  Point result = Point::infinity();
  for (int w = L.windows; w-- > 0;) {
    for (int b = 0; b < c; ++b) result = result.dbl();
    result += window_sums[w];
  }
  return result;
}

template <class Curve>
typename CudaMsm<Curve>::Point CudaMsm<Curve>::sum(const Affine* d_bases, const uint32_t* d_base_index, size_t n,
                                                   cudaStream_t stream) {
  if (n == 0) return Point::infinity();
  const size_t blocks = sum_blocks(n);
  workspace_.reserve(sum_workspace_bytes(n));
  Point* partial = reinterpret_cast<Point*>(workspace_.get());
  Point* total = partial + blocks;
  sum_segments_kernel<Curve><<<blocks, kSumThreads, 0, stream>>>(SelectedBases<Curve>{d_bases, d_base_index}, n,
                                                                 (n + blocks - 1) / blocks, partial);
  CUDA_LAUNCH_OK();
  sum_segments_kernel<Curve><<<1, kSumThreads, 0, stream>>>(PointArray<Curve>{partial}, blocks, blocks, total);
  CUDA_LAUNCH_OK();
  Point result;
  CUDA_OK(cudaMemcpyAsync(&result, total, sizeof(Point), cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  return result;
}

}  // namespace zk::msm
