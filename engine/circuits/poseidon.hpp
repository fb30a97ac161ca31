// poseidon.hpp — the Poseidon permutation over Fr of BLS12-381 (width 3, x^5 S-box, 8 full and 57
// partial rounds: the paper's 128-bit parameters for t = 3 and a 255-bit prime), natively and as a
// circuit gadget with identical results.
//
// Constants: round constants come from SplitMix64 seeded with "zkpipe-poseidon-t3" and reduced
// into Fr; the MDS matrix is the Cauchy matrix 1/(x_i + y_j), x_i = i, y_j = 3 + j. This is a real
// Poseidon instance with the standard round structure, but not Filecoin's (neptune) constants:
// it serves as a realistic proving workload, not for interoperable hashes.
#pragma once
#include <array>

#include "engine/r1cs/constraint_system.hpp"

namespace zk::circuits {

using r1cs::ConstraintSystem;
using r1cs::Fr;
using r1cs::LC;

struct PoseidonParams {
  static constexpr int width = 3;
  static constexpr int full_rounds = 8;
  static constexpr int partial_rounds = 57;
  static constexpr int rounds = full_rounds + partial_rounds;
  std::array<std::array<Fr, width>, rounds> round_constants;
  std::array<std::array<Fr, width>, width> mds;

  static const PoseidonParams& get();
};

// Two-to-one compression: the first element of permute(left, right, 0).
Fr poseidon_hash2(const Fr& left, const Fr& right);

// A circuit value: the linear combination it stands for and its value in the witness. The
// combination is left empty when the constraint system only generates the witness.
struct LcValue {
  LC lc;
  Fr value;
  // Variable `v` holding `value`.
  static LcValue of(const ConstraintSystem& cs, r1cs::Variable v, const Fr& value) {
    return {cs.is_witness_generator() ? LC() : LC(v), value};
  }
};

// The same function in a circuit: allocates the S-box outputs as private variables and returns
// the output as a linear combination with its value.
LcValue poseidon_hash2_gadget(ConstraintSystem& cs, const LcValue& left, const LcValue& right);

}  // namespace zk::circuits
