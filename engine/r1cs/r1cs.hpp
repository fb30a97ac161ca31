// r1cs.hpp — a rank-1 constraint system as three sparse matrices A, B, C (one row per
// constraint), the R1csBuilder that records them from a circuit, the WitnessGenerator that
// records only a circuit's assignment z, and evaluate_rows(), which turns the two into a proof's
// inputs.
//
// Synthesis for a proof is witness generation then rows (as snarkjs/rapidsnark split it): the
// circuit runs once against a WitnessGenerator, which tells it to skip building linear
// combinations and runs the circuit's independent parts on every core, and evaluate_rows() computes a_i = <A_i,z>, b_i = <B_i,z>, c_i = <C_i,z> from the
// matrices the proving key carries, on every core, into caller-provided buffers (pageable vectors
// or pinned slabs). It writes the snarkjs extra rows (row m+s has a = z_s, s = 0..num_public) and
// zeros up to the domain size, checks a_i * b_i = c_i on every row and throws zk::Error naming
// the first unsatisfied constraint: a wrong witness never becomes a proof.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "engine/r1cs/constraint_system.hpp"
#include "engine/r1cs/domain_size.hpp"

namespace zk::r1cs {

// Compressed sparse rows: row i's terms are [row_start[i], row_start[i + 1]) of column/coeff.
struct SparseRows {
  std::vector<uint64_t> row_start{0};
  std::vector<uint32_t> column;
  std::vector<Fr> coeff;

  size_t rows() const { return row_start.size() - 1; }
  size_t terms() const { return column.size(); }
  void append_row(const LC& lc);
  // <row i, z>.
  Fr dot(size_t row, std::span<const Fr> z) const;
  bool operator==(const SparseRows&) const = default;
};

struct ConstraintMatrices {
  SparseRows a, b, c;
  size_t rows() const { return a.rows(); }
  uint64_t bytes() const;
  bool operator==(const ConstraintMatrices&) const = default;
};

struct R1cs {
  uint32_t num_public = 0;  // public inputs, not counting ONE
  uint32_t num_vars = 1;    // ONE + public + private
  ConstraintMatrices matrices;
  std::vector<Fr> assignment;  // z, as recorded while building (z[0] = 1)

  size_t num_constraints() const { return matrices.rows(); }
};

class R1csBuilder final : public ConstraintSystem {
 public:
  R1csBuilder() { r1cs_.assignment.push_back(Fr::one()); }
  Variable alloc_public(const Fr& value) override;
  Variable alloc_private(const Fr& value) override;
  void enforce(const LC& a, const LC& b, const LC& c) override;
  void parts(uint64_t count, uint64_t vars_each, const Part& part) override;  // in order, counted
  R1cs take() { return std::move(r1cs_); }

 private:
  R1cs r1cs_;
  bool private_seen_ = false;
};

// Records z and nothing else; enforce() is ignored, and is_witness_generator() lets circuits skip
// building the linear combinations they would pass to it.
class WitnessGenerator final : public ConstraintSystem {
 public:
  // `expected_vars`: the variable count, where known (a proving key's), to allocate z once.
  explicit WitnessGenerator(size_t expected_vars = 1) { z_.reserve(expected_vars); z_.push_back(Fr::one()); }
  Variable alloc_public(const Fr& value) override;
  Variable alloc_private(const Fr& value) override;
  void enforce(const LC&, const LC&, const LC&) override {}
  bool is_witness_generator() const override { return true; }
  void parts(uint64_t count, uint64_t vars_each, const Part& part) override;  // on every core

  uint32_t num_public() const { return num_public_; }
  std::vector<Fr> take() { return std::move(z_); }

 private:
  std::vector<Fr> z_;
  uint32_t num_public_ = 0;
  bool private_seen_ = false;
};

// Fills a, b, c (each the domain size, at least rows() + num_public + 1) from the matrices and the
// full assignment z, as described atop this file, on up to worker_threads() threads.
void evaluate_rows(const ConstraintMatrices& matrices, std::span<const Fr> z, uint32_t num_public,
                   std::span<Fr> a, std::span<Fr> b, std::span<Fr> c);

}  // namespace zk::r1cs
