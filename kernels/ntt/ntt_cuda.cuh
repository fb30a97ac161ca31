// ntt_cuda.cuh — number-theoretic transforms over Fr on a CUDA GPU, the device twin of ntt_cpu.hpp
// (same definitions, same roots: the CPU transforms are this file's test oracle).
//
// CudaNtt runs, on device-resident data of size 2^lg_n (1 <= lg_n <= 30), natural order in and out:
//   ntt / intt / coset_ntt   exactly as ntt_cpu.hpp defines them;
//   quotient_evaluations     the prover's H step: for v in a, b, c: iNTT, times omega_2n^i (the
//                            coset shift, fused into the iNTT's last pass), NTT; the NTT of c ends
//                            in a fused epilogue that leaves a*b - c in a (b and c are clobbered).
// How: decimation in time, the bit-reversal permutation fused into the first pass's loads; the
// log2(n) butterfly stages run in a few passes of up to 9 stages each (3 passes at 2^24), every
// pass holding 2^9 elements of a block in shared memory; inside a pass each thread takes 4
// elements at a time and runs two stages on them in registers. Twiddles are read from one table
// of omega^e, e < n/2, per size (the inverse reads omega^-e as -omega^(n/2 - e)), so a butterfly
// costs one product, and none where its twiddle is omega^0 (all of stage 0, half of stage 1, ...).
// Twiddle and coset tables are computed once per size (and shift) and kept; the scratch buffer
// grows to the largest size seen. workspace_bytes() says how much device memory a size needs
// beyond its data, before anything runs; reserve_quotient() builds and allocates it before the
// first quotient (an allocation waits for all of the device's work, other threads' copies
// included). One CudaNtt per stream; not thread-safe.
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "kernels/ntt/domain.hpp"
#include "kernels/util/cuda_check.hpp"

namespace zk::ntt {

// factor * base^e for e < count, as lo[e mod 2^lg_lo] * hi[e >> lg_lo] (factor folded into lo);
// where the base is one, lo holds the factor alone and every power is it (no product).
struct PowerTableView {
  const Fr* lo;
  const Fr* hi;  // null where the base is one
  int lg_lo;
  __device__ __forceinline__ Fr at(uint32_t e) const {
    if (hi == nullptr) return lo[0];
    return lo[e & ((1u << lg_lo) - 1)] * hi[e >> lg_lo];
  }
};

struct PowerTable {
  cuda::DeviceBuffer<Fr> lo, hi;
  int lg_lo = 0;
  PowerTableView view() const { return {lo.get(), hi.get(), lg_lo}; }
  // Builds the table of factor * base^e, e < 2^lg_count, on the host and uploads it.
  PowerTable(const Fr& base, const Fr& factor, int lg_count, cudaStream_t stream);
  static size_t bytes(int lg_count);
};

// One pass of butterfly stages [first_stage, first_stage + stages) over the whole array.
struct NttPassPlan {
  int first_stage, stages, lg_columns;
};
std::vector<NttPassPlan> plan_ntt_passes(int lg_n);

class CudaNtt {
 public:
  // Device bytes an NTT of size 2^lg_n needs beyond its data (scratch and tables), and the
  // quotient beyond its three vectors.
  static size_t workspace_bytes(int lg_n);

  void ntt(Fr* d_data, const Domain& domain, cudaStream_t stream);
  void intt(Fr* d_data, const Domain& domain, cudaStream_t stream);
  void coset_ntt(Fr* d_data, const Domain& domain, const Fr& shift, cudaStream_t stream);
  void quotient_evaluations(Fr* d_a, Fr* d_b, Fr* d_c, const Domain& domain, cudaStream_t stream);
  // Builds now the tables and scratch quotient_evaluations() of `domain` takes, so that it allocates nothing.
  void reserve_quotient(const Domain& domain, cudaStream_t stream);

 private:
  enum class Direction { forward, inverse };
  struct Scaling {
    const PowerTable* before = nullptr;  // x_j *= before(j) on the input
    const PowerTable* after = nullptr;   // y_i *= after(i) on the output
  };
  // When set, the output y is not stored; instead quotient_a[i] = quotient_a[i]*quotient_b[i] - y_i.
  struct QuotientEpilogue {
    Fr* a = nullptr;
    const Fr* b = nullptr;
  };
  void transform(Fr* d_data, const Domain& domain, Direction direction, Scaling scaling,
                 QuotientEpilogue epilogue, cudaStream_t stream);
  // omega^e for e < n/2, built once per size; the inverse transform reads it too.
  const Fr* twiddles(const Domain& domain, cudaStream_t stream);
  const PowerTable& powers(const Fr& base, const Fr& factor, int lg_count, cudaStream_t stream);
  // n^-1 * shift^i, the quotient's iNTT's last-pass scale onto the coset.
  const PowerTable& to_coset(const Domain& domain, cudaStream_t stream);

  using TableKey = std::tuple<std::array<uint64_t, 4>, std::array<uint64_t, 4>, int>;
  std::map<TableKey, PowerTable> tables_;
  std::map<int, cuda::DeviceBuffer<Fr>> twiddle_tables_;
  cuda::DeviceBuffer<Fr> scratch_;
};

}  // namespace zk::ntt
