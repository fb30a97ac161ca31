// secure_random.hpp — randomness for secrets: uniform field elements drawn from the operating
// system's CSPRNG through getrandom(2), which blocks only until the kernel's pool is first seeded.
// A distinct type from the seeded Rng (rng.hpp) and with no seed, so nothing reproducible can be
// passed where a secret is needed: a proof's blinding (groth16::Blinding) is made from a
// SecureRandom, or from an Rng only through a factory named for tests.
//
// Promises: field<F>() is uniform in F (rejection sampling over fresh 64-bit words); reads are
// retried after EINTR and completed after short reads; any other failure of getrandom throws
// zk::Error saying that the system's random source is unavailable. Stateless, so one object may
// be used from any number of threads at once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <sys/types.h>

#include "engine/util/uniform_field.hpp"

namespace zk {

// getrandom(2)'s signature; a parameter so that tests can feed EINTR and short reads.
using ReadRandomBytes = ssize_t (*)(void* buffer, size_t length, unsigned flags);
// Fills `out` from `read`, retrying after EINTR and continuing after short reads; throws zk::Error
// on any other failure.
void fill_random_bytes(std::span<std::byte> out, ReadRandomBytes read);

class SecureRandom {
 public:
  uint64_t next_u64();
  template <class F>
  F field() {
    return uniform_field_element<F>([this] { return next_u64(); });
  }
};

}  // namespace zk
