// domain.hpp — evaluation domains of Fr: the multiplicative subgroup of size 2^lg_n with
// ffjavascript's roots of unity (omega_{2^32} = 5^((r-1)/2^32)), which snarkjs keys fix, and the
// coset shift omega_{2n} that the Groth16 quotient is evaluated on. Host and device.
#pragma once
#include "kernels/ff/bls12-381.hpp"

namespace zk::ntt {

using bls12_381::Fr;

// A primitive 2^lg_n-th root of unity (lg_n <= 32).
inline Fr root_of_unity(int lg_n) {
  Fr w = bls12_381::field_from_table<Fr>(bls12_381::fr_root_of_unity_2_32);
  for (int i = lg_n; i < bls12_381::fr_two_adicity; ++i) w = w.sqr();
  return w;
}

struct Domain {
  int lg_n;
  size_t n;
  Fr omega, omega_inv, n_inv;
  Fr coset_shift, coset_shift_inv;  // omega_{2n} and its inverse

  explicit Domain(int lg) : lg_n(lg), n(size_t{1} << lg) {
    omega = root_of_unity(lg);
    omega_inv = omega.inverse();
    n_inv = Fr::from_u64(n).inverse();
    coset_shift = root_of_unity(lg + 1);
    coset_shift_inv = coset_shift.inverse();
  }
};

}  // namespace zk::ntt
