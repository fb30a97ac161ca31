// setup.hpp — Groth16 key generation in snarkjs's convention, from a seeded toxic waste.
//
// FOR TESTING AND BENCHMARKS ONLY: whoever knows the seed can forge proofs. Real deployments
// take keys from a ceremony (snarkjs .zkey). The keys follow snarkjs's zkey_new.js: domain n the
// smallest power of two above constraints + public inputs, rows m+s with A = z_s, gamma = 1,
// L_c on ffjavascript's roots, H[i] = [L^(2n)_{2i+1}(tau)/delta]_1, so proofs from these keys
// verify in snarkjs. Fixed-base multiplication runs on every core.
#pragma once
#include <cstdint>
#include <functional>
#include <string_view>

#include "engine/groth16/keys.hpp"
#include "engine/r1cs/r1cs.hpp"

namespace zk::groth16 {

struct ToxicWaste {
  bls12_381::Fr tau, alpha, beta, delta;
  static ToxicWaste from_seed(uint64_t seed);
};

// Called with a step's name as setup moves through its stages (for progress output).
using SetupProgress = std::function<void(std::string_view step)>;

ProvingKey setup(const r1cs::R1cs& r1cs, const ToxicWaste& waste, const circuits::CircuitSpec& spec,
                 const SetupProgress& progress = {});

}  // namespace zk::groth16
