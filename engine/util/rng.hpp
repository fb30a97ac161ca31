// rng.hpp — the seeded, reproducible random source of zkpipe: SplitMix64, and uniform field
// elements by rejection sampling. For test vectors, benchmarks, built-in witnesses and the
// *testing-only* toxic waste of `zkpipe setup`; never for secrets (not cryptographically secure):
// secrets such as a proof's blinding come from SecureRandom (secure_random.hpp).
#pragma once
#include <cstdint>

#include "engine/util/splitmix64.hpp"
#include "engine/util/uniform_field.hpp"
#include "kernels/ff/bls12-381.hpp"

namespace zk {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next_u64() {
    const uint64_t out = splitmix64(state_);
    state_ += splitmix64_gamma;
    return out;
  }
  // Uniform in [0, bound).
  uint64_t below(uint64_t bound) { return next_u64() % bound; }

  // A uniform element of the prime field F.
  template <class F>
  F field() {
    return uniform_field_element<F>([this] { return next_u64(); });
  }

 private:
  uint64_t state_;
};

}  // namespace zk
