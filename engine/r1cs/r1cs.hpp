// r1cs.hpp — a rank-1 constraint system as matrices (for setup), the R1csBuilder that records it
// from a circuit, and the WitnessEvaluator that computes a proof's inputs from a circuit.
//
// WitnessEvaluator is synthesis as a prover needs it (bellperson's ProvingAssignment): for each
// constraint row it writes a_i = <A_i,z>, b_i = <B_i,z>, c_i = <C_i,z> into caller-provided
// buffers (pageable vectors or pinned slabs), then the snarkjs extra rows (row m+s has a = z_s,
// s = 0..num_public) and zeros up to the domain size. It checks a_i * b_i = c_i on every row and
// throws zk::Error naming the first unsatisfied constraint: a wrong witness never becomes a proof.
#pragma once
#include <span>
#include <vector>

#include "engine/r1cs/constraint_system.hpp"

namespace zk::r1cs {

struct Constraint {
  LC a, b, c;
};

struct R1cs {
  uint32_t num_public = 0;  // public inputs, not counting ONE
  uint32_t num_vars = 1;    // ONE + public + private
  std::vector<Constraint> constraints;
  std::vector<Fr> assignment;  // z, as recorded while building (z[0] = 1)

  // Rows of the Groth16 domain: the constraints plus one row per public variable and ONE.
  size_t rows() const { return constraints.size() + num_public + 1; }
};

// log2 of the smallest power of two strictly greater than constraints + public inputs (snarkjs).
int domain_lg_size(size_t num_constraints, size_t num_public);

class R1csBuilder final : public ConstraintSystem {
 public:
  R1csBuilder() { r1cs_.assignment.push_back(Fr::one()); }
  Variable alloc_public(const Fr& value) override;
  Variable alloc_private(const Fr& value) override;
  void enforce(const LC& a, const LC& b, const LC& c) override;
  R1cs take() { return std::move(r1cs_); }

 private:
  R1cs r1cs_;
  bool private_seen_ = false;
};

class WitnessEvaluator final : public ConstraintSystem {
 public:
  // a, b, c must each hold at least the domain size; rows beyond the circuit are zero-filled by
  // finish().
  WitnessEvaluator(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c);
  Variable alloc_public(const Fr& value) override;
  Variable alloc_private(const Fr& value) override;
  void enforce(const LC& a, const LC& b, const LC& c) override;
  // Appends the public-input rows and zero-fills; returns the full assignment z.
  std::vector<Fr> finish();

  size_t num_constraints() const { return row_; }
  uint32_t num_public() const { return num_public_; }

 private:
  std::span<Fr> a_, b_, c_;
  std::vector<Fr> z_{Fr::one()};
  size_t row_ = 0;
  uint32_t num_public_ = 0;
  bool private_seen_ = false;
};

}  // namespace zk::r1cs
