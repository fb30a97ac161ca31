// ntt_cuda.cu — the CUDA NTT's kernel and host launcher (see ntt_cuda.cuh for the contract).
#include "kernels/ntt/ntt_cuda.cuh"

#include <algorithm>
#include <stdexcept>

namespace zk::ntt {
namespace {

// A pass holds at most 2^kLgBlockElements elements in shared memory.
constexpr int kLgBlockElements = 9;
// Passes after the first take at most this many stages, leaving >= 2 columns per block so that
// neighbouring threads touch neighbouring elements.
constexpr int kMaxLaterStages = 8;
// Stages per register round: each thread holds 2^kLgRadix elements of a column in registers and
// runs kLgRadix stages on them between two visits to shared memory.
constexpr int kLgRadix = 2;
constexpr int kMaxPassThreads = (1 << kLgBlockElements) >> kLgRadix;
// Blocks per SM the register budget must allow: 6 caps a thread at 85 registers (ptxas takes 72,
// no spills). Measured on the H200 at 2^24 (2^26): 4 blocks (90 registers) 5.11 ms (22.6),
// 5 blocks (76) 4.80 (21.1), 6 blocks 4.72 (20.7).
constexpr int kMinPassBlocks = 6;

struct NttPassArgs {
  const Fr* src;
  Fr* dst;
  int lg_n, first_stage, stages, lg_columns;
  bool gather_bit_reversed;
  bool inverse;           // twiddles omega^-e, read from the forward table as -omega^(n/2 - e)
  const Fr* twiddles;     // omega^e for e < n/2 (the forward omega)
  bool scale_before, scale_after;
  PowerTableView before, after;
  Fr* quotient_a;  // epilogue: quotient_a[i] = quotient_a[i] * quotient_b[i] - y_i
  const Fr* quotient_b;
};

__device__ __forceinline__ uint32_t bit_reverse(uint32_t i, int lg_n) { return __brev(i) >> (32 - lg_n); }

// omega^e (omega^-e for the inverse), 0 < e < n/2.
__device__ __forceinline__ Fr twiddle(const NttPassArgs& args, uint32_t e) {
  if (!args.inverse) return args.twiddles[e];
  return -args.twiddles[(1u << (args.lg_n - 1)) - e];  // omega^(n/2) = -1
}

// A block's elements in shared memory as two planes of 16-byte halves, slot m stored at
// m ^ ((m >> 3) & 7): the 8 lanes of a 16-byte access phase then hit 8 different bank groups
// both when they read neighbouring elements and when they read elements 2^kLgRadix apart.
class SharedElements {
 public:
  __device__ SharedElements(uint4* words, uint32_t count) : words_(words), count_(count) {}
  __device__ __forceinline__ Fr load(uint32_t m) const {
    const uint32_t p = slot(m);
    const uint4 lo = words_[p], hi = words_[count_ + p];
    Fr x;
    x.l[0] = (uint64_t{lo.y} << 32) | lo.x, x.l[1] = (uint64_t{lo.w} << 32) | lo.z;
    x.l[2] = (uint64_t{hi.y} << 32) | hi.x, x.l[3] = (uint64_t{hi.w} << 32) | hi.z;
    return x;
  }
  __device__ __forceinline__ void store(uint32_t m, const Fr& x) const {
    const uint32_t p = slot(m);
    words_[p] = make_uint4(uint32_t(x.l[0]), uint32_t(x.l[0] >> 32), uint32_t(x.l[1]), uint32_t(x.l[1] >> 32));
    words_[count_ + p] = make_uint4(uint32_t(x.l[2]), uint32_t(x.l[2] >> 32), uint32_t(x.l[3]), uint32_t(x.l[3] >> 32));
  }

 private:
  static __device__ __forceinline__ uint32_t slot(uint32_t m) { return m ^ ((m >> 3) & 7); }
  uint4* words_;
  uint32_t count_;
};

// Block element slot m = t * 2^c + col holds the array element
//   (high << (s + k)) | (t << s) | (column_group << c) | col,
// with s = first_stage, k = stages, c = lg_columns: 2^c columns of 2^k elements each, every
// column one independent group of the pass's stages. Local stage o (global s + o) pairs t and
// t + 2^o with the twiddle omega^(((t mod 2^o) << s | column) << (lg_n - s - o - 1)).
// Each round, a thread takes 2^kLgRadix elements of one column, 2^o apart, closed under the
// round's stages, and runs those stages in registers.
__global__ void __launch_bounds__(kMaxPassThreads, kMinPassBlocks) ntt_pass_kernel(const NttPassArgs args) {
  extern __shared__ uint4 shared_words[];
  constexpr int R = kLgRadix;
  const int s = args.first_stage, k = args.stages, c = args.lg_columns;
  const uint32_t elements = 1u << (k + c);
  const uint32_t column_mask = (1u << c) - 1;
  const uint32_t group_bits = s - c;
  const uint32_t column_group = blockIdx.x & ((1u << group_bits) - 1);
  const uint32_t high = blockIdx.x >> group_bits;
  const SharedElements values(shared_words, elements);

  auto element_index = [&](uint32_t m) {
    return (high << (s + k)) | ((m >> c) << s) | (column_group << c) | (m & column_mask);
  };

  for (uint32_t m = threadIdx.x; m < elements; m += blockDim.x) {
    uint32_t i = element_index(m);
    uint32_t source = args.gather_bit_reversed ? bit_reverse(i, args.lg_n) : i;
    Fr x = args.src[source];
    if (args.scale_before) x = x * args.before.at(source);
    values.store(m, x);
  }
  __syncthreads();

  const uint32_t col = threadIdx.x & column_mask, u = threadIdx.x >> c;
  const uint32_t column = (column_group << c) | col;  // the element's low s bits
  for (int o = 0; o < k; o += R) {
    const int round_stages = min(R, k - o);
    Fr x[1 << R];
    uint32_t t[1 << R];
#pragma unroll
    for (int j = 0; j < (1 << R); ++j) {
      // j's low round_stages bits step by 2^o inside the column; the rest pick more sets.
      const uint32_t step = j & ((1u << round_stages) - 1), set = j >> round_stages;
      const uint32_t rest = (u << (R - round_stages)) | set;
      t[j] = (rest & ((1u << o) - 1)) | (step << o) | ((rest >> o) << (o + round_stages));
      // (Only a transform of fewer than 2^kLgRadix elements leaves some of a thread's slots empty.)
      if (((t[j] << c) | col) < elements) x[j] = values.load((t[j] << c) | col);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r >= round_stages) break;
      const int stage = s + o + r;
#pragma unroll
      for (int j = 0; j < (1 << R); ++j) {
        if (j & (1 << r)) continue;
        Fr y = x[j | (1 << r)];
        const uint32_t position = t[j] & ((1u << (o + r)) - 1);
        const uint32_t e = ((position << s) | column) << (args.lg_n - stage - 1);
        if (e != 0) y = y * twiddle(args, e);  // omega^0 = 1: all of stage 0, half of stage 1, ...
        x[j | (1 << r)] = x[j] - y;
        x[j] = x[j] + y;
      }
    }
#pragma unroll
    for (int j = 0; j < (1 << R); ++j)
      if (((t[j] << c) | col) < elements) values.store((t[j] << c) | col, x[j]);
    __syncthreads();
  }

  for (uint32_t m = threadIdx.x; m < elements; m += blockDim.x) {
    uint32_t i = element_index(m);
    Fr y = values.load(m);
    if (args.scale_after) y = y * args.after.at(i);
    if (args.quotient_a)
      args.quotient_a[i] = args.quotient_a[i] * args.quotient_b[i] - y;
    else
      args.dst[i] = y;
  }
}

// table[e] = omega^e for e < count, from a power table's two halves.
__global__ void twiddle_table_kernel(Fr* table, PowerTableView powers, uint32_t count) {
  const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < count) table[e] = powers.at(e);
}

// A pass block's shared memory fits the 48 KiB every kernel may take without opting in.
static_assert((sizeof(Fr) << kLgBlockElements) <= 48 * 1024);

std::array<uint64_t, 4> limbs_of(const Fr& x) { return {x.l[0], x.l[1], x.l[2], x.l[3]}; }

}  // namespace

PowerTable::PowerTable(const Fr& base, const Fr& factor, int lg_count, cudaStream_t stream)
    : lg_lo((lg_count + 1) / 2) {
  const bool constant = base == Fr::one();
  std::vector<Fr> lo_host(constant ? 1 : size_t{1} << lg_lo), hi_host(constant ? 0 : size_t{1} << (lg_count - lg_lo));
  Fr p = factor;
  for (auto& x : lo_host) x = p, p = p * base;
  Fr step = base.pow_u64(uint64_t{1} << lg_lo), q = Fr::one();
  for (auto& x : hi_host) x = q, q = q * step;
  lo = cuda::DeviceBuffer<Fr>(lo_host.size());
  lo.upload(lo_host, stream);
  if (!constant) {
    hi = cuda::DeviceBuffer<Fr>(hi_host.size());
    hi.upload(hi_host, stream);
  }
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
  // Every later pass takes at least one register round's stages (a column must fill a thread).
  if (lg_n > first && lg_n - first < kLgRadix) first = lg_n - kLgRadix;
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
  // scratch + the twiddle table (n/2) and its power table + the coset scale table.
  return (sizeof(Fr) << lg_n) + (sizeof(Fr) << std::max(lg_n - 1, 0)) + PowerTable::bytes(std::max(lg_n - 1, 0)) +
         PowerTable::bytes(lg_n);
}

const PowerTable& CudaNtt::powers(const Fr& base, const Fr& factor, int lg_count, cudaStream_t stream) {
  TableKey key{limbs_of(base), limbs_of(factor), lg_count};
  auto it = tables_.find(key);
  if (it == tables_.end()) it = tables_.emplace(key, PowerTable(base, factor, lg_count, stream)).first;
  return it->second;
}

const Fr* CudaNtt::twiddles(const Domain& domain, cudaStream_t stream) {
  auto it = twiddle_tables_.find(domain.lg_n);
  if (it == twiddle_tables_.end()) {
    const int lg_count = std::max(domain.lg_n - 1, 0);
    const uint32_t count = 1u << lg_count;
    const PowerTable& halves = powers(domain.omega, Fr::one(), lg_count, stream);
    cuda::DeviceBuffer<Fr> table(count);
    twiddle_table_kernel<<<(count + 255) / 256, 256, 0, stream>>>(table.get(), halves.view(), count);
    CUDA_LAUNCH_OK();
    it = twiddle_tables_.emplace(domain.lg_n, std::move(table)).first;
  }
  return it->second.get();
}

void CudaNtt::transform(Fr* d_data, const Domain& domain, Direction direction, Scaling scaling,
                        QuotientEpilogue epilogue, cudaStream_t stream) {
  auto plan = plan_ntt_passes(domain.lg_n);
  if (plan.size() > 1) scratch_.reserve(domain.n);
  const Fr* twiddle_table = twiddles(domain, stream);
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
    args.inverse = direction == Direction::inverse;
    args.twiddles = twiddle_table;
    args.scale_before = first && scaling.before;
    if (args.scale_before) args.before = scaling.before->view();
    args.scale_after = last && scaling.after;
    if (args.scale_after) args.after = scaling.after->view();
    if (last) args.quotient_a = epilogue.a, args.quotient_b = epilogue.b;
    const uint32_t elements = 1u << (plan[p].stages + plan[p].lg_columns);
    const uint32_t blocks = static_cast<uint32_t>(domain.n / elements);
    const uint32_t threads = std::max(elements >> kLgRadix, 1u);
    ntt_pass_kernel<<<blocks, threads, sizeof(Fr) * elements, stream>>>(args);
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

// iNTT then onto the coset: y_i * n^-1 * shift^i, in the iNTT's last pass.
const PowerTable& CudaNtt::to_coset(const Domain& domain, cudaStream_t stream) {
  return powers(domain.coset_shift, domain.n_inv, domain.lg_n, stream);
}

void CudaNtt::reserve_quotient(const Domain& domain, cudaStream_t stream) {
  if (plan_ntt_passes(domain.lg_n).size() > 1) scratch_.reserve(domain.n);
  twiddles(domain, stream);
  to_coset(domain, stream);
}

void CudaNtt::quotient_evaluations(Fr* d_a, Fr* d_b, Fr* d_c, const Domain& domain, cudaStream_t stream) {
  const PowerTable& to_coset = this->to_coset(domain, stream);
  for (Fr* v : {d_a, d_b, d_c}) transform(v, domain, Direction::inverse, {nullptr, &to_coset}, {}, stream);
  transform(d_a, domain, Direction::forward, {}, {}, stream);
  transform(d_b, domain, Direction::forward, {}, {}, stream);
  transform(d_c, domain, Direction::forward, {}, {d_a, d_b}, stream);
}

}  // namespace zk::ntt
