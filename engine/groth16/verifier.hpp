// verifier.hpp — Groth16 verification: e(-A, B) e(L, gamma) e(C, delta) e(alpha, beta) = 1 with
// L = IC_0 + sum_i x_i IC_{i+1}, as snarkjs checks it, plus what snarkjs omits: every proof point
// must be on its curve and in the prime-order subgroup. Never throws for a bad proof; the result
// says why it was rejected.
#pragma once
#include <span>
#include <string>

#include "engine/groth16/keys.hpp"
#include "engine/groth16/prover.hpp"

namespace zk::groth16 {

struct Verdict {
  bool accepted;
  std::string reason;  // empty when accepted
  explicit operator bool() const { return accepted; }
};

Verdict verify(const VerifyingKey& vk, const Proof& proof, std::span<const Fr> public_inputs);

}  // namespace zk::groth16
