// pippenger_cuda_digits.cu — steps 1 and 2 of the GPU MSM (contract in pippenger_cuda.cuh):
// CudaMsmDigits, the scalars' Booth digits sorted by bucket per window, for any curve.
#include "kernels/msm/pippenger_cuda_impl.cuh"

namespace zk::msm {
namespace {

// The device regions of steps 1 and 2 for n scalars, c-bit windows and a digit layout.
struct DigitsLayout : MsmShape {
  uint32_t *keys, *points, *sorted_keys, *sorted_points;
  uint32_t *bucket_sizes, *bucket_starts, *segment_counts, *segment_starts, *most_segments;
  uint64_t* bucket_ends;
  void *sort_temp, *scan_temp;
  size_t sort_temp_bytes, scan_temp_bytes;
  size_t bytes;

  DigitsLayout(size_t n_, int c_, DigitLayout layout, uint8_t* base) : MsmShape(n_, c_, layout) {
    sort_temp_bytes = 0;
    CUDA_OK(cub::DeviceRadixSort::SortPairs(nullptr, sort_temp_bytes, (uint32_t*)nullptr, (uint32_t*)nullptr,
                                            (uint32_t*)nullptr, (uint32_t*)nullptr, set_pairs, 0, c));
    scan_temp_bytes = bucket_scan_temp_bytes(buckets);
    Carver carve(base);
    keys = carve.take<uint32_t>(pairs);
    points = carve.take<uint32_t>(pairs);
    sorted_points = carve.take<uint32_t>(pairs);
    sorted_keys = carve.take<uint32_t>(set_pairs);
    bucket_sizes = carve.take<uint32_t>(buckets + 1);
    bucket_starts = carve.take<uint32_t>(buckets + 1);
    bucket_ends = carve.take<uint64_t>(buckets);
    segment_counts = carve.take<uint32_t>(buckets + 1);
    segment_starts = carve.take<uint32_t>(buckets + 1);
    most_segments = carve.take<uint32_t>(1);
    sort_temp = carve.take<uint8_t>(sort_temp_bytes);
    scan_temp = carve.take<uint8_t>(scan_temp_bytes);
    bytes = carve.bytes();
  }
};

// 1. One thread per scalar: canonical form, then a (bucket key, entry | sign) pair for each window
// w = sets * r + s (its bits and width as `layout` lays them), pair s * rows * n + r * n + i with
// entry r * n + i in bucket set s (windows past the scalar's, which pad the last row, have zero
// digits). Key buckets_per_set marks a zero digit (sorted last, counted nowhere).
__global__ void digits_kernel(const Fr* scalars, size_t n, int c, DigitLayout layout, int sets, int rows,
                              uint32_t* keys, uint32_t* points, uint32_t* bucket_sizes) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  uint64_t limbs[4];
  scalars[i].to_canonical(limbs);
  const uint32_t buckets_per_set = 1u << (c - 1);
  for (int w = 0; w < sets * rows; ++w) {
    const int set = w % sets, row = w / sets;
    const size_t entry = row * n + i, pair = set * rows * n + entry;
    int32_t d = booth_digit_at(limbs, layout.window_offset(c, w), layout.window_width(c, w));
    uint32_t key = buckets_per_set;
    if (d != 0) {
      key = static_cast<uint32_t>(d > 0 ? d : -d) - 1;
      atomicAdd(&bucket_sizes[size_t(set) * buckets_per_set + key], 1u);
    }
    keys[pair] = key;
    points[pair] = static_cast<uint32_t>(entry) | (d < 0 ? kSignBit : 0u);
  }
}

// One thread per bucket: where its pairs end in the sets' sorted lists laid end to end (set s's
// at s * set_pairs), and how many accumulation chunks (GpuMsmPolicy::chunk_points pairs of that
// concatenation each) they touch: each chunk a bucket touches adds one segment sum to it. The
// most any bucket has goes into *most_segments (zero before; blocks of whole warps).
__global__ void bucket_bounds_kernel(const uint32_t* bucket_sizes, const uint32_t* bucket_starts, size_t set_pairs,
                                     uint32_t buckets_per_set, size_t buckets, uint64_t* bucket_ends,
                                     uint32_t* segment_counts, uint32_t* most_segments) {
  const size_t b = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  uint32_t count = 0;
  if (b < buckets) {
    const size_t set = b / buckets_per_set, size = bucket_sizes[b];
    const size_t begin = set * set_pairs + bucket_starts[b] - bucket_starts[set * buckets_per_set];
    constexpr size_t chunk = GpuMsmPolicy::chunk_points;
    bucket_ends[b] = begin + size;
    count = size ? static_cast<uint32_t>((begin + size - 1) / chunk - begin / chunk + 1) : 0;
    segment_counts[b] = count;
  }
  const uint32_t warp_most = __reduce_max_sync(0xffffffffu, count);
  if (threadIdx.x % 32 == 0 && warp_most) atomicMax(most_segments, warp_most);
}

}  // namespace

size_t CudaMsmDigits::workspace_bytes(size_t n, int window_bits, DigitLayout layout) {
  return DigitsLayout(n, resolve_window_bits(n, window_bits, layout), layout, nullptr).bytes;
}

void CudaMsmDigits::reserve(size_t n, int window_bits, DigitLayout layout) {
  workspace_.reserve(workspace_bytes(n, window_bits, layout));
}

void CudaMsmDigits::compute(const Fr* d_scalars, size_t n, cudaStream_t stream, int window_bits, DigitLayout layout) {
  const int c = resolve_window_bits(n, window_bits, layout);
  if (MsmShape(n, c, layout).set_pairs >= kSignBit)
    throw cuda::CudaError(layout.over_table() ? "GPU MSM: at most 2^31 - 1 table entries of a fixed-base MSM"
                                              : "GPU MSM: at most 2^31 - 1 points");
  workspace_.reserve(DigitsLayout(n, c, layout, nullptr).bytes);
  DigitsLayout L(n, c, layout, workspace_.get());
  sorted_ = {n, c, layout, L.sorted_points, L.bucket_sizes, L.bucket_ends, L.segment_starts, L.most_segments};
  if (n == 0) return;

  CUDA_OK(cudaMemsetAsync(L.bucket_sizes, 0, (L.buckets + 1) * sizeof(uint32_t), stream));
  digits_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(d_scalars, n, c, layout, L.sets, L.rows, L.keys,
                                                                    L.points, L.bucket_sizes);
  CUDA_LAUNCH_OK();
  for (int set = 0; set < L.sets; ++set) {
    const size_t offset = set * L.set_pairs;
    size_t temp_bytes = L.sort_temp_bytes;
    CUDA_OK(cub::DeviceRadixSort::SortPairs(L.sort_temp, temp_bytes, L.keys + offset, L.sorted_keys, L.points + offset,
                                            L.sorted_points + offset, L.set_pairs, 0, c, stream));
  }
  size_t scan_bytes = L.scan_temp_bytes;
  CUDA_OK(cub::DeviceScan::ExclusiveSum(L.scan_temp, scan_bytes, L.bucket_sizes, L.bucket_starts, L.buckets + 1, stream));
  CUDA_OK(cudaMemsetAsync(L.segment_counts + L.buckets, 0, sizeof(uint32_t), stream));
  CUDA_OK(cudaMemsetAsync(L.most_segments, 0, sizeof(uint32_t), stream));
  static_assert(kThreads % 32 == 0, "bucket_bounds_kernel takes whole warps");
  bucket_bounds_kernel<<<blocks_for(L.buckets, kThreads), kThreads, 0, stream>>>(
      L.bucket_sizes, L.bucket_starts, L.set_pairs, L.buckets_per_set, L.buckets, L.bucket_ends, L.segment_counts,
      L.most_segments);
  CUDA_LAUNCH_OK();
  scan_bytes = L.scan_temp_bytes;
  CUDA_OK(cub::DeviceScan::ExclusiveSum(L.scan_temp, scan_bytes, L.segment_counts, L.segment_starts, L.buckets + 1, stream));
}

}  // namespace zk::msm
