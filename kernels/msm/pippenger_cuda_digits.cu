// pippenger_cuda_digits.cu — steps 1 and 2 of the GPU MSM (contract in pippenger_cuda.cuh):
// CudaMsmDigits, the scalars' Booth digits sorted by bucket per window, for any curve.
#include "kernels/msm/pippenger_cuda_impl.cuh"

namespace zk::msm {
namespace {

// The device regions of steps 1 and 2 for n scalars and c-bit windows.
struct DigitsLayout : MsmShape {
  uint32_t *keys, *points, *sorted_keys, *sorted_points;
  uint32_t *bucket_sizes, *bucket_starts, *segment_counts, *segment_starts;
  void *sort_temp, *scan_temp;
  size_t sort_temp_bytes, scan_temp_bytes;
  size_t bytes;

  DigitsLayout(size_t n_, int c_, uint8_t* base) : MsmShape(n_, c_) {
    sort_temp_bytes = 0;
    CUDA_OK(cub::DeviceRadixSort::SortPairs(nullptr, sort_temp_bytes, (uint32_t*)nullptr, (uint32_t*)nullptr,
                                            (uint32_t*)nullptr, (uint32_t*)nullptr, n, 0, c));
    scan_temp_bytes = bucket_scan_temp_bytes(buckets);
    Carver carve(base);
    keys = carve.take<uint32_t>(windows * n);
    points = carve.take<uint32_t>(windows * n);
    sorted_points = carve.take<uint32_t>(windows * n);
    sorted_keys = carve.take<uint32_t>(n);
    bucket_sizes = carve.take<uint32_t>(buckets + 1);
    bucket_starts = carve.take<uint32_t>(buckets + 1);
    segment_counts = carve.take<uint32_t>(buckets + 1);
    segment_starts = carve.take<uint32_t>(buckets + 1);
    sort_temp = carve.take<uint8_t>(sort_temp_bytes);
    scan_temp = carve.take<uint8_t>(scan_temp_bytes);
    bytes = carve.bytes();
  }
};

// 1. One thread per scalar: canonical form, then a (bucket key, point|sign) pair per window.
// Key buckets_per_window marks a zero digit (sorted last, counted nowhere).
__global__ void digits_kernel(const Fr* scalars, size_t n, int c, int windows, uint32_t* keys,
                              uint32_t* points, uint32_t* bucket_sizes) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  uint64_t limbs[4];
  scalars[i].to_canonical(limbs);
  const uint32_t buckets_per_window = 1u << (c - 1);
  for (int w = 0; w < windows; ++w) {
    int32_t d = booth_digit(limbs, w, c);
    uint32_t key = buckets_per_window;
    if (d != 0) {
      key = static_cast<uint32_t>(d > 0 ? d : -d) - 1;
      atomicAdd(&bucket_sizes[size_t(w) * buckets_per_window + key], 1u);
    }
    keys[w * n + i] = key;
    points[w * n + i] = static_cast<uint32_t>(i) | (d < 0 ? kSignBit : 0u);
  }
}

__global__ void segment_counts_kernel(const uint32_t* bucket_sizes, size_t buckets, uint32_t* segment_counts) {
  size_t b = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (b < buckets)
    segment_counts[b] = (bucket_sizes[b] + GpuMsmPolicy::segment_points - 1) / GpuMsmPolicy::segment_points;
}

}  // namespace

size_t CudaMsmDigits::workspace_bytes(size_t n, int window_bits) {
  return DigitsLayout(n, resolve_window_bits(n, window_bits), nullptr).bytes;
}

void CudaMsmDigits::compute(const Fr* d_scalars, size_t n, cudaStream_t stream, int window_bits) {
  if (n >= kSignBit) throw cuda::CudaError("GPU MSM: at most 2^31 - 1 points");
  const int c = resolve_window_bits(n, window_bits);
  workspace_.reserve(DigitsLayout(n, c, nullptr).bytes);
  DigitsLayout L(n, c, workspace_.get());
  sorted_ = {n, c, L.sorted_points, L.bucket_sizes, L.bucket_starts, L.segment_starts};
  if (n == 0) return;

  CUDA_OK(cudaMemsetAsync(L.bucket_sizes, 0, (L.buckets + 1) * sizeof(uint32_t), stream));
  digits_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(d_scalars, n, c, L.windows, L.keys, L.points,
                                                                    L.bucket_sizes);
  CUDA_LAUNCH_OK();
  for (int w = 0; w < L.windows; ++w) {
    size_t temp_bytes = L.sort_temp_bytes;
    CUDA_OK(cub::DeviceRadixSort::SortPairs(L.sort_temp, temp_bytes, L.keys + w * n, L.sorted_keys,
                                            L.points + w * n, L.sorted_points + w * n, n, 0, c, stream));
  }
  size_t scan_bytes = L.scan_temp_bytes;
  CUDA_OK(cub::DeviceScan::ExclusiveSum(L.scan_temp, scan_bytes, L.bucket_sizes, L.bucket_starts, L.buckets + 1, stream));
  CUDA_OK(cudaMemsetAsync(L.segment_counts + L.buckets, 0, sizeof(uint32_t), stream));
  segment_counts_kernel<<<blocks_for(L.buckets, kThreads), kThreads, 0, stream>>>(L.bucket_sizes, L.buckets,
                                                                                   L.segment_counts);
  CUDA_LAUNCH_OK();
  scan_bytes = L.scan_temp_bytes;
  CUDA_OK(cub::DeviceScan::ExclusiveSum(L.scan_temp, scan_bytes, L.segment_counts, L.segment_starts, L.buckets + 1, stream));
}

}  // namespace zk::msm
