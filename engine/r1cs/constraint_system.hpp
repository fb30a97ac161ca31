// constraint_system.hpp — the circuit-building API: variables, linear combinations, and the
// ConstraintSystem interface that circuits are written against.
//
// Variables are numbered as circom numbers wires: 0 is the constant ONE, then the public inputs,
// then the private witness. Circuits therefore allocate every public input before the first
// private one (an alloc_public after an alloc_private throws std::logic_error). A circuit runs the
// same sequence of calls whatever its witness, so one synthesis builds the R1CS (R1csBuilder,
// for setup) and another records the witness for a proof (WitnessGenerator, for proving).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/ff/bls12-381.hpp"

namespace zk::r1cs {

using bls12_381::Fr;

struct Variable {
  uint32_t index;
};
inline constexpr Variable ONE{0};

struct Term {
  uint32_t var;
  Fr coeff;
};

// A sparse sum of coefficient * variable. Terms on the same variable are merged on insertion,
// so chains of linear layers (Poseidon's MDS) stay as short as their distinct variables.
class LinearCombination {
 public:
  LinearCombination() = default;
  LinearCombination(Variable v) { add(v.index, Fr::one()); }  // NOLINT: implicit by design
  static LinearCombination constant(const Fr& k) { return LinearCombination().add(ONE.index, k); }

  LinearCombination& add(uint32_t var, const Fr& coeff) {
    for (auto& t : terms_)
      if (t.var == var) {
        t.coeff += coeff;
        return *this;
      }
    terms_.push_back({var, coeff});
    return *this;
  }
  LinearCombination& add(const LinearCombination& other, const Fr& scale) {
    for (const auto& t : other.terms_) add(t.var, t.coeff * scale);
    return *this;
  }
  friend LinearCombination operator+(LinearCombination a, const LinearCombination& b) {
    return a.add(b, Fr::one());
  }
  friend LinearCombination operator-(LinearCombination a, const LinearCombination& b) {
    return a.add(b, -Fr::one());
  }
  friend LinearCombination operator*(const LinearCombination& a, const Fr& k) {
    return LinearCombination().add(a, k);
  }
  const std::vector<Term>& terms() const { return terms_; }

 private:
  std::vector<Term> terms_;
};
using LC = LinearCombination;

class ConstraintSystem {
 public:
  virtual ~ConstraintSystem() = default;
  virtual Variable alloc_public(const Fr& value) = 0;
  virtual Variable alloc_private(const Fr& value) = 0;
  // Enforces <a,z> * <b,z> = <c,z>.
  virtual void enforce(const LC& a, const LC& b, const LC& c) = 0;
  // True when only the assignment is wanted and enforce() is ignored (bellperson's
  // is_witness_generator): a circuit may then skip building linear combinations and enforce()
  // calls, provided it allocates exactly the same variables with the same values.
  virtual bool is_witness_generator() const { return false; }
  // Independent parts of a circuit: calls part(cs, k) for k = 0..count-1, where part k allocates
  // exactly `vars_each` private variables (no public one) with its constraints, and builds no
  // linear combination over another part's variables. By default the parts run in order on this
  // system, as if written inline; a witness generator runs them on every core, each into its own
  // stretch of z. A part that allocates another count is a bug in the circuit (std::logic_error).
  using Part = std::function<void(ConstraintSystem& cs, uint64_t k)>;
  virtual void parts(uint64_t count, [[maybe_unused]] uint64_t vars_each, const Part& part) {
    for (uint64_t k = 0; k < count; ++k) part(*this, k);
  }
};

}  // namespace zk::r1cs
