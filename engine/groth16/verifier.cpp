#include "engine/groth16/verifier.hpp"

#include <fmt/format.h>

#include "engine/groth16/pairing.hpp"
#include "kernels/msm/pippenger_cpu.hpp"

namespace zk::groth16 {

Verdict verify(const VerifyingKey& vk, const Proof& proof, std::span<const Fr> public_inputs) {
  if (public_inputs.size() != vk.num_public())
    return {false, fmt::format("{} public inputs given, the verifying key expects {}",
                               public_inputs.size(), vk.num_public())};
  if (!bls12_381::in_prime_order_subgroup(proof.a) || proof.a.is_infinity())
    return {false, "proof point A is not a point of G1"};
  if (!bls12_381::in_prime_order_subgroup(proof.b) || proof.b.is_infinity())
    return {false, "proof point B is not a point of G2"};
  if (!bls12_381::in_prime_order_subgroup(proof.c))
    return {false, "proof point C is not a point of G1"};
  // sum_i ic[i+1] * input_i by Pippenger on every core (70 inputs: 10 ms one by one on the H200 host).
  const G1 l = G1::from_affine(vk.ic[0]) +
               msm::msm<bls12_381::G1Curve>(std::span<const G1Affine>(vk.ic).subspan(1), public_inputs);
  const PairingInput pairs[] = {
      {-proof.a, proof.b}, {l.to_affine(), vk.gamma2}, {proof.c, vk.delta2}, {vk.alpha1, vk.beta2}};
  if (!multi_pairing(pairs).is_one()) return {false, "the pairing equation does not hold"};
  return {true, ""};
}

}  // namespace zk::groth16
