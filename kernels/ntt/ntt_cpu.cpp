#include "kernels/ntt/ntt_cpu.hpp"

#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/util/parallel.hpp"

namespace zk::ntt {
namespace {

void bit_reverse_permute(std::span<Fr> a, int lg_n) {
  parallel_for(a.size(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      size_t j = 0;
      for (int b = 0; b < lg_n; ++b) j |= ((i >> b) & 1) << (lg_n - 1 - b);
      if (i < j) std::swap(a[i], a[j]);
    }
  }, 4096);
}

// powers[k] = w^k for k in [0, count).
std::vector<Fr> powers_of(const Fr& w, size_t count) {
  std::vector<Fr> powers(count);
  parallel_for(count, [&](size_t begin, size_t end) {
    Fr p = w.pow_u64(begin);
    for (size_t k = begin; k < end; ++k) {
      powers[k] = p;
      p = p * w;
    }
  }, 4096);
  return powers;
}

// Iterative radix-2 decimation in time after a bit-reversal permutation.
void transform(std::span<Fr> a, int lg_n, const Fr& w) {
  if (a.size() != (size_t{1} << lg_n)) throw std::invalid_argument("ntt: size is not 2^lg_n");
  if (lg_n == 0) return;
  bit_reverse_permute(a, lg_n);
  size_t n = a.size();
  std::vector<Fr> twiddles = powers_of(w, n / 2);
  for (size_t half = 1; half < n; half <<= 1) {
    size_t stride = n / (2 * half);
    parallel_for(n / 2, [&](size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        size_t k = t & (half - 1);
        size_t i = (t - k) * 2 + k;
        Fr v = a[i + half] * twiddles[k * stride];
        a[i + half] = a[i] - v;
        a[i] = a[i] + v;
      }
    }, 8192);
  }
}

}  // namespace

void ntt(std::span<Fr> a, const Domain& d) { transform(a, d.lg_n, d.omega); }

void intt(std::span<Fr> a, const Domain& d) {
  transform(a, d.lg_n, d.omega_inv);
  parallel_for(a.size(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) a[i] = a[i] * d.n_inv;
  }, 8192);
}

void scale_by_powers(std::span<Fr> a, const Fr& g) {
  parallel_for(a.size(), [&](size_t begin, size_t end) {
    Fr p = g.pow_u64(begin);
    for (size_t j = begin; j < end; ++j) {
      a[j] = a[j] * p;
      p = p * g;
    }
  }, 8192);
}

void coset_ntt(std::span<Fr> a, const Domain& d, const Fr& shift) {
  scale_by_powers(a, shift);
  ntt(a, d);
}

}  // namespace zk::ntt
