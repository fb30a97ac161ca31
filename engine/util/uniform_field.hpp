// uniform_field.hpp — a uniform element of a prime field from a source of uniform 64-bit words,
// by rejection sampling (words masked to the modulus's bit length, redrawn while >= the modulus).
// Shared by the seeded Rng and by SecureRandom; the quality of the element is the source's.
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>

namespace zk {

template <class F, class NextU64>
F uniform_field_element(NextU64&& next_u64) {
  uint64_t m[F::N];
  for (int i = 0; i < F::N; ++i) m[i] = F::params::modulus(i);
  const int top_bits = 64 - __builtin_clzll(m[F::N - 1]);
  for (;;) {
    uint64_t x[F::N];
    for (auto& limb : x) limb = next_u64();
    x[F::N - 1] &= (top_bits == 64) ? ~0ull : ((1ull << top_bits) - 1);
    // x < m, limbs compared from the most significant down
    if (std::lexicographical_compare(std::rbegin(x), std::rend(x), std::rbegin(m), std::rend(m)))
      return F::from_canonical(x);
  }
}

}  // namespace zk
