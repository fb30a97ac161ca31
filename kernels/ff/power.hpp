// power.hpp — x^e by left-to-right square-and-multiply, for any multiplicative type with one(),
// sqr() and operator* (prime fields, Fp12); e is a canonical integer of little-endian limbs.
// Not constant-time: exponents here are public (inversion by Fermat, final exponentiation).
#pragma once
#include <cstdint>

#include "kernels/util/host_device.hpp"

namespace zk::ff {

template <class T>
ZK_HD T power(const T& x, const uint64_t* e, int limb_count) {
  T r = T::one();
  for (int i = limb_count - 1; i >= 0; --i)
    for (int b = 63; b >= 0; --b) {
      r = r.sqr();
      if ((e[i] >> b) & 1) r = r * x;
    }
  return r;
}

}  // namespace zk::ff
