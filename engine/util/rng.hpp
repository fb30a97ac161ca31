// rng.hpp — the seeded, reproducible random source of zkpipe: SplitMix64, and uniform field
// elements by rejection sampling. For test vectors, benchmarks, built-in witnesses and the
// *testing-only* toxic waste of `zkpipe setup`; never for secrets (not cryptographically secure).
#pragma once
#include <cstdint>

#include "kernels/ff/bls12-381.hpp"

namespace zk {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound).
  uint64_t below(uint64_t bound) { return next_u64() % bound; }

  // A uniform element of the prime field F.
  template <class F>
  F field() {
    uint64_t m[F::N];
    for (int i = 0; i < F::N; ++i) m[i] = F::params::modulus(i);
    int top_bits = 64 - __builtin_clzll(m[F::N - 1]);
    for (;;) {
      uint64_t x[F::N];
      for (auto& limb : x) limb = next_u64();
      x[F::N - 1] &= (top_bits == 64) ? ~0ull : ((1ull << top_bits) - 1);
      bool less = false;
      for (int i = F::N - 1; i >= 0; --i)
        if (x[i] != m[i]) {
          less = x[i] < m[i];
          break;
        }
      if (less) return F::from_canonical(x);
    }
  }

 private:
  uint64_t state_;
};

}  // namespace zk
