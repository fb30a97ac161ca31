// pairing.hpp — the optimal ate pairing e: G1 x G2 -> GT of BLS12-381, for verification.
//
// multi_pairing(pairs) = prod e(P_i, Q_i), computed as one Miller loop product followed by one
// final exponentiation to the power 3(p^12 - 1)/r, the convention of noble and snarkjs, so
// e(alpha, beta) equals snarkjs's vk_alphabeta_12 coefficient for coefficient. Pairs with a point at infinity contribute 1.
// Host-only; affine Miller loop (one inversion per step for all pairs), final exponentiation by
// the p^2 Frobenius and square-and-multiply with cyclotomic squarings. Thread-safe: pure functions.
#pragma once
#include <span>
#include <utility>

#include "kernels/ec/bls12-381.hpp"
#include "kernels/ff/fp12.hpp"

namespace zk::groth16 {

using bls12_381::Fp12;
using bls12_381::G1Affine;
using bls12_381::G2Affine;

using PairingInput = std::pair<G1Affine, G2Affine>;

Fp12 miller_loop(std::span<const PairingInput> pairs);
Fp12 final_exponentiation(const Fp12& f);
Fp12 multi_pairing(std::span<const PairingInput> pairs);
Fp12 pairing(const G1Affine& p, const G2Affine& q);

}  // namespace zk::groth16
