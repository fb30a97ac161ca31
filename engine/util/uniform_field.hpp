// uniform_field.hpp — a uniform element of a prime field from a source of uniform 64-bit words,
// by rejection sampling (words masked to the modulus's bit length, redrawn while >= the modulus).
// Shared by the seeded Rng and by SecureRandom; the quality of the element is the source's.
#pragma once
#include <cstdint>

namespace zk {

template <class F, class NextU64>
F uniform_field_element(NextU64&& next_u64) {
  const uint64_t top_mask = ~0ull >> __builtin_clzll(F::params::modulus(F::N - 1));
  for (;;) {
    uint64_t x[F::N];
    for (auto& limb : x) limb = next_u64();
    x[F::N - 1] &= top_mask;
    if (F::is_below_modulus(x)) return F::from_canonical(x);
  }
}

}  // namespace zk
