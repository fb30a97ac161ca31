// ntt_cuda.cu — the CUDA NTT's kernel and host launcher (see ntt_cuda.cuh for the contract).
#include "kernels/ntt/ntt_cuda.cuh"

#include <algorithm>
#include <stdexcept>

namespace zk::ntt {
namespace {

// A pass holds at most 2^kLgBlockElements elements (and as many twiddles) in shared memory.
constexpr int kLgBlockElements = 10;
// Passes after the first take at most this many stages, leaving >= 4 columns per block so that
// neighbouring threads touch neighbouring elements.
constexpr int kMaxLaterStages = 8;

struct NttPassArgs {
  const Fr* src;
  Fr* dst;
  int lg_n, first_stage, stages, lg_columns;
  bool gather_bit_reversed;
  PowerTableView twiddles;  // omega^e, e < n/2 (omega of the transform's direction)
  bool scale_before, scale_after;
  PowerTableView before, after;
  Fr* quotient_a;  // epilogue: quotient_a[i] = quotient_a[i] * quotient_b[i] - y_i
  const Fr* quotient_b;
};

__device__ __forceinline__ uint32_t bit_reverse(uint32_t i, int lg_n) { return __brev(i) >> (32 - lg_n); }

// Block element slot m = t * 2^c + col holds the array element
//   (high << (s + k)) | (t << s) | (column_group << c) | col,
// with s = first_stage, k = stages, c = lg_columns: 2^c columns of 2^k elements each, every
// column one independent group of the pass's stages. Slots [E, 2E) of shared memory hold the
// twiddles: slot 2^c * f + col (1 <= f < 2^k) is the twiddle of column col at local stage
// o = floor(log2 f), butterfly position f - 2^o.
__global__ void ntt_pass_kernel(const NttPassArgs args) {
  extern __shared__ Fr shared[];
  const int s = args.first_stage, k = args.stages, c = args.lg_columns;
  const uint32_t elements = 1u << (k + c), half = elements >> 1;
  const uint32_t column_mask = (1u << c) - 1;
  const uint32_t group_bits = s - c;
  const uint32_t column_group = blockIdx.x & ((1u << group_bits) - 1);
  const uint32_t high = blockIdx.x >> group_bits;
  Fr* values = shared;
  Fr* twiddles = shared + elements;

  auto element_index = [&](uint32_t m) {
    return (high << (s + k)) | ((m >> c) << s) | (column_group << c) | (m & column_mask);
  };

  for (uint32_t m = threadIdx.x; m < elements; m += blockDim.x) {
    uint32_t i = element_index(m);
    uint32_t source = args.gather_bit_reversed ? bit_reverse(i, args.lg_n) : i;
    Fr x = args.src[source];
    if (args.scale_before) x = x * args.before.at(source);
    values[m] = x;
    // Twiddle slots 2^c .. 2^(k+c) - 1.
    if (m >= (1u << c)) {
      uint32_t col = m & column_mask, f = m >> c;
      int o = 31 - __clz(f);
      uint32_t position = ((f - (1u << o)) << s) | (column_group << c) | col;
      twiddles[m] = args.twiddles.at(position << (args.lg_n - s - o - 1));
    }
  }
  __syncthreads();

  for (int o = 0; o < k; ++o) {
    for (uint32_t q = threadIdx.x; q < half; q += blockDim.x) {
      uint32_t col = q & column_mask, u = q >> c;
      uint32_t position = u & ((1u << o) - 1);
      uint32_t t0 = ((u >> o) << (o + 1)) | position, t1 = t0 | (1u << o);
      Fr w = twiddles[(((1u << o) + position) << c) | col];
      uint32_t m0 = (t0 << c) | col, m1 = (t1 << c) | col;
      Fr x = values[m0], y = values[m1] * w;
      values[m0] = x + y;
      values[m1] = x - y;
    }
    __syncthreads();
  }

  for (uint32_t m = threadIdx.x; m < elements; m += blockDim.x) {
    uint32_t i = element_index(m);
    Fr y = values[m];
    if (args.scale_after) y = y * args.after.at(i);
    if (args.quotient_a)
      args.quotient_a[i] = args.quotient_a[i] * args.quotient_b[i] - y;
    else
      args.dst[i] = y;
  }
}

constexpr size_t kPassSharedBytes = 2 * sizeof(Fr) << kLgBlockElements;

void configure_pass_kernel() {
  static bool configured = [] {
    CUDA_OK(cudaFuncSetAttribute(ntt_pass_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(kPassSharedBytes)));
    return true;
  }();
  (void)configured;
}

std::array<uint64_t, 4> limbs_of(const Fr& x) { return {x.l[0], x.l[1], x.l[2], x.l[3]}; }

}  // namespace

PowerTable::PowerTable(const Fr& base, const Fr& factor, int lg_count, cudaStream_t stream)
    : lg_lo((lg_count + 1) / 2) {
  std::vector<Fr> lo_host(size_t{1} << lg_lo), hi_host(size_t{1} << (lg_count - lg_lo));
  Fr p = factor;
  for (auto& x : lo_host) x = p, p = p * base;
  Fr step = base.pow_u64(uint64_t{1} << lg_lo), q = Fr::one();
  for (auto& x : hi_host) x = q, q = q * step;
  lo = cuda::DeviceBuffer<Fr>(lo_host.size());
  hi = cuda::DeviceBuffer<Fr>(hi_host.size());
  lo.upload(lo_host, stream);
  hi.upload(hi_host, stream);
  CUDA_OK(cudaStreamSynchronize(stream));  // the host vectors die here
}

size_t PowerTable::bytes(int lg_count) {
  int lg_lo = (lg_count + 1) / 2;
  return ((size_t{1} << lg_lo) + (size_t{1} << (lg_count - lg_lo))) * sizeof(Fr);
}

std::vector<NttPassPlan> plan_ntt_passes(int lg_n) {
  if (lg_n < 1 || lg_n > 30) throw std::invalid_argument("CUDA NTT: lg_n must be in [1, 30]");
  std::vector<NttPassPlan> plan;
  int first = std::min(lg_n, kLgBlockElements);
  plan.push_back({0, first, 0});
  int remaining = lg_n - first, stage = first;
  int passes = (remaining + kMaxLaterStages - 1) / kMaxLaterStages;
  for (int p = 0; p < passes; ++p) {
    int stages = remaining / passes + (p < remaining % passes ? 1 : 0);
    plan.push_back({stage, stages, std::min(stage, kLgBlockElements - stages)});
    stage += stages;
  }
  return plan;
}

size_t CudaNtt::workspace_bytes(int lg_n) {
  // scratch + forward and inverse twiddles + the coset scale table.
  return (sizeof(Fr) << lg_n) + 2 * PowerTable::bytes(lg_n - 1) + PowerTable::bytes(lg_n);
}

const PowerTable& CudaNtt::powers(const Fr& base, const Fr& factor, int lg_count, cudaStream_t stream) {
  TableKey key{limbs_of(base), limbs_of(factor), lg_count};
  auto it = tables_.find(key);
  if (it == tables_.end()) it = tables_.emplace(key, PowerTable(base, factor, lg_count, stream)).first;
  return it->second;
}

const PowerTable& CudaNtt::twiddles(const Domain& domain, Direction direction, cudaStream_t stream) {
  const Fr& omega = direction == Direction::forward ? domain.omega : domain.omega_inv;
  return powers(omega, Fr::one(), std::max(domain.lg_n - 1, 0), stream);
}

void CudaNtt::transform(Fr* d_data, const Domain& domain, Direction direction, Scaling scaling,
                        QuotientEpilogue epilogue, cudaStream_t stream) {
  configure_pass_kernel();
  auto plan = plan_ntt_passes(domain.lg_n);
  if (plan.size() > 1) scratch_.reserve(domain.n);
  const PowerTable& tw = twiddles(domain, direction, stream);
  for (size_t p = 0; p < plan.size(); ++p) {
    const bool first = p == 0, last = p + 1 == plan.size();
    NttPassArgs args{};
    // One pass works in place (a block reads its whole array first); several go through scratch.
    args.src = first ? d_data : scratch_.get();
    args.dst = last ? d_data : scratch_.get();
    args.lg_n = domain.lg_n;
    args.first_stage = plan[p].first_stage;
    args.stages = plan[p].stages;
    args.lg_columns = plan[p].lg_columns;
    args.gather_bit_reversed = first;
    args.twiddles = tw.view();
    args.scale_before = first && scaling.before;
    if (args.scale_before) args.before = scaling.before->view();
    args.scale_after = last && scaling.after;
    if (args.scale_after) args.after = scaling.after->view();
    if (last) args.quotient_a = epilogue.a, args.quotient_b = epilogue.b;
    const uint32_t elements = 1u << (plan[p].stages + plan[p].lg_columns);
    const uint32_t blocks = static_cast<uint32_t>(domain.n / elements);
    const uint32_t threads = std::max(elements / 2, 1u);
    ntt_pass_kernel<<<blocks, threads, 2 * sizeof(Fr) * elements, stream>>>(args);
    CUDA_LAUNCH_OK();
  }
}

void CudaNtt::ntt(Fr* d_data, const Domain& domain, cudaStream_t stream) {
  transform(d_data, domain, Direction::forward, {}, {}, stream);
}

void CudaNtt::intt(Fr* d_data, const Domain& domain, cudaStream_t stream) {
  const PowerTable& scale = powers(Fr::one(), domain.n_inv, domain.lg_n, stream);
  transform(d_data, domain, Direction::inverse, {nullptr, &scale}, {}, stream);
}

void CudaNtt::coset_ntt(Fr* d_data, const Domain& domain, const Fr& shift, cudaStream_t stream) {
  const PowerTable& scale = powers(shift, Fr::one(), domain.lg_n, stream);
  transform(d_data, domain, Direction::forward, {&scale, nullptr}, {}, stream);
}

void CudaNtt::quotient_evaluations(Fr* d_a, Fr* d_b, Fr* d_c, const Domain& domain, cudaStream_t stream) {
  // iNTT then onto the coset: y_i * n^-1 * shift^i, in the iNTT's last pass.
  const PowerTable& to_coset = powers(domain.coset_shift, domain.n_inv, domain.lg_n, stream);
  for (Fr* v : {d_a, d_b, d_c}) transform(v, domain, Direction::inverse, {nullptr, &to_coset}, {}, stream);
  transform(d_a, domain, Direction::forward, {}, {}, stream);
  transform(d_b, domain, Direction::forward, {}, {}, stream);
  transform(d_c, domain, Direction::forward, {}, {d_a, d_b}, stream);
}

}  // namespace zk::ntt
