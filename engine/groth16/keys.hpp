// keys.hpp — Groth16 proving and verifying keys in snarkjs's convention (gamma = 1, H points on
// the odd 2n-th roots that absorb the division by Z, public-input rows appended), so one prover
// serves zkpipe's built-in circuits and imported .zkey files alike.
//
// Binary proving-key file (little-endian, x86-64): magic "ZKPIPEPK", u32 version, circuit name
// (u32 length + bytes), u64 target constraints, u64 constraints, u32 public, u32 vars,
// u32 lg_domain, then alpha1 beta1 delta1 (G1), beta2 gamma2 delta2 (G2), then the point arrays
// ic, a, b1, l, h (G1) and b2 (G2), each as u64 count + points. Points are affine, coordinates
// in Montgomery form; infinity is all zero. Then the constraint matrices A, B, C (version 2), each
// as three arrays (u64 count + values): row starts (u64, constraints + 1 of them), columns (u32)
// and coefficients (Fr, Montgomery form), as snarkjs's zkey carries its coefficients, so that a
// proof's rows come from the key and the witness alone. read_proving_key() checks every header
// field, every count against the header and the file's size, every point against the curve and
// every matrix entry (rows ordered, columns below the variable count, coefficients reduced), and
// throws zk::Error naming the file, byte offset and what was expected.
#pragma once
#include <filesystem>
#include <span>
#include <vector>

#include "engine/circuits/circuit.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "kernels/ec/bls12-381.hpp"

namespace zk::groth16 {

using bls12_381::G1Affine;
using bls12_381::G2Affine;

struct VerifyingKey {
  G1Affine alpha1;
  G2Affine beta2, gamma2, delta2;
  std::vector<G1Affine> ic;  // num_public + 1 points
  size_t num_public() const { return ic.size() - 1; }
};

struct ProvingKey {
  circuits::CircuitSpec circuit;  // the built-in circuit this key is for
  uint64_t num_constraints = 0;
  uint32_t num_public = 0;  // not counting ONE
  uint32_t num_vars = 0;    // ONE + public + private
  uint32_t lg_domain = 0;
  G1Affine alpha1, beta1, delta1;
  G2Affine beta2, gamma2, delta2;
  std::vector<G1Affine> ic;  // [0, num_public]
  std::vector<G1Affine> a;   // every variable
  std::vector<G1Affine> b1;  // every variable
  std::vector<G1Affine> l;   // private variables (snarkjs's C section)
  std::vector<G1Affine> h;   // 2^lg_domain points
  std::vector<G2Affine> b2;  // every variable
  // Of a built-in circuit's key; empty in a key read from a circom .zkey (its rows come from the file).
  r1cs::ConstraintMatrices constraints;
  // The variables whose b1 and b2 points are both at infinity (in no row of B), ascending; made
  // from the points by index_b_query(), which setup and both key readers call.
  std::vector<uint32_t> b_absent;

  size_t domain_size() const { return size_t{1} << lg_domain; }
  VerifyingKey verifying_key() const { return {alpha1, beta2, gamma2, delta2, ic}; }
  uint64_t bytes() const;  // points and matrices
  uint64_t msm_point_bytes() const;  // the MSMs' bases: a, b1, l, h, b2 (what a device holds)
  void index_b_query();  // fills b_absent from b1 and b2 (absent_from_b)
  bool splits_b_query() const;  // groth16::splits_b_query of this key
  // The variables whose points B1 and B2 multiply: those in B where the key splits B's query, else all.
  uint32_t b_query_vars() const { return num_vars - (splits_b_query() ? uint32_t(b_absent.size()) : 0u); }
};

// first + i for each i where b1[i] and b2[i] are both at infinity (a variable in no row of B),
// ascending; on every core.
std::vector<uint32_t> absent_from_b(std::span<const G1Affine> b1, std::span<const G2Affine> b2, uint32_t first = 0);
// Whether B1 and B2 take a witness split of their own, without the `absent` variables of `vars`:
// where at least 1/16 of the variables are absent (poseidon-merkle's x^4 terms: 9 %, a quarter of
// its significant entries), enough to pay for the GPU's second decomposition of the scalars.
inline bool splits_b_query(size_t absent, size_t vars) { return absent > 0 && absent * 16 >= vars; }

void write_proving_key(const ProvingKey& pk, const std::filesystem::path& path);
ProvingKey read_proving_key(const std::filesystem::path& path);

}  // namespace zk::groth16
