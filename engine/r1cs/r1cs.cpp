#include "engine/r1cs/r1cs.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/util/error.hpp"
#include "kernels/util/parallel.hpp"

namespace zk::r1cs {

void SparseRows::append_row(const LC& lc) {
  for (const auto& t : lc.terms()) {
    column.push_back(t.var);
    coeff.push_back(t.coeff);
  }
  row_start.push_back(column.size());
}

Fr SparseRows::dot(size_t row, std::span<const Fr> z) const {
  Fr sum = Fr::zero();
  for (uint64_t k = row_start[row]; k < row_start[row + 1]; ++k) sum += coeff[k] * z[column[k]];
  return sum;
}

uint64_t ConstraintMatrices::bytes() const {
  uint64_t total = 0;
  for (const SparseRows* m : {&a, &b, &c})
    total += m->row_start.size() * sizeof(uint64_t) + m->terms() * (sizeof(uint32_t) + sizeof(Fr));
  return total;
}

namespace {

void check_public_first(bool private_seen) {
  if (private_seen)
    throw std::logic_error("circuit allocated a public input after a private one; "
                           "allocate every public input first");
}

void check_part_size(uint64_t k, uint64_t allocated, uint64_t vars_each) {
  if (allocated != vars_each)
    throw std::logic_error(fmt::format("circuit part {} allocated {} variables where its circuit declared {}", k,
                                       allocated, vars_each));
}

// One part's stretch of z, for WitnessGenerator::parts.
class PartWitness final : public ConstraintSystem {
 public:
  PartWitness(std::span<Fr> stretch, uint32_t first_index) : stretch_(stretch), first_index_(first_index) {}
  Variable alloc_public(const Fr&) override {
    throw std::logic_error("a circuit part allocated a public input; allocate every public input first");
  }
  Variable alloc_private(const Fr& value) override {
    if (used_ == stretch_.size())
      throw std::logic_error(fmt::format("a circuit part allocated more than the {} variables its circuit declared",
                                         stretch_.size()));
    stretch_[used_] = value;
    return {first_index_ + static_cast<uint32_t>(used_++)};
  }
  void enforce(const LC&, const LC&, const LC&) override {}
  bool is_witness_generator() const override { return true; }
  size_t used() const { return used_; }

 private:
  std::span<Fr> stretch_;
  uint32_t first_index_;
  size_t used_ = 0;
};

}  // namespace

Variable R1csBuilder::alloc_public(const Fr& value) {
  check_public_first(private_seen_);
  r1cs_.num_public++;
  r1cs_.assignment.push_back(value);
  return {r1cs_.num_vars++};
}

Variable R1csBuilder::alloc_private(const Fr& value) {
  private_seen_ = true;
  r1cs_.assignment.push_back(value);
  return {r1cs_.num_vars++};
}

void R1csBuilder::enforce(const LC& a, const LC& b, const LC& c) {
  r1cs_.matrices.a.append_row(a);
  r1cs_.matrices.b.append_row(b);
  r1cs_.matrices.c.append_row(c);
}

void R1csBuilder::parts(uint64_t count, uint64_t vars_each, const Part& part) {
  for (uint64_t k = 0; k < count; ++k) {
    const uint32_t before = r1cs_.num_vars;
    part(*this, k);
    check_part_size(k, r1cs_.num_vars - before, vars_each);
  }
}

Variable WitnessGenerator::alloc_public(const Fr& value) {
  check_public_first(private_seen_);
  num_public_++;
  z_.push_back(value);
  return {static_cast<uint32_t>(z_.size() - 1)};
}

Variable WitnessGenerator::alloc_private(const Fr& value) {
  private_seen_ = true;
  z_.push_back(value);
  return {static_cast<uint32_t>(z_.size() - 1)};
}

void WitnessGenerator::parts(uint64_t count, uint64_t vars_each, const Part& part) {
  private_seen_ = true;
  const size_t first = z_.size();
  z_.resize(first + count * vars_each);
  parallel_for(count, [&](size_t begin, size_t end) {
    for (uint64_t k = begin; k < end; ++k) {
      const size_t at = first + k * vars_each;
      PartWitness witness(std::span<Fr>(z_).subspan(at, vars_each), static_cast<uint32_t>(at));
      part(witness, k);
      check_part_size(k, witness.used(), vars_each);
    }
  });
}

void evaluate_rows(const ConstraintMatrices& matrices, std::span<const Fr> z, uint32_t num_public,
                   std::span<Fr> a, std::span<Fr> b, std::span<Fr> c) {
  if (a.size() != b.size() || a.size() != c.size())
    throw std::invalid_argument("evaluate_rows: a, b, c buffers differ in size");
  const size_t m = matrices.rows();
  if (m + num_public + 1 > a.size())
    fail("synthesis: {} constraints and {} public inputs do not fit a domain of {} rows", m, num_public, a.size());
  // Row by row on every core; the first unsatisfied row is the same on any core count.
  const size_t unsatisfied = parallel_find_first(a.size(), [&](size_t i) {
    if (i >= m) {
      a[i] = i - m <= num_public ? z[i - m] : Fr::zero();
      b[i] = Fr::zero();
      c[i] = Fr::zero();
      return false;
    }
    a[i] = matrices.a.dot(i, z);
    b[i] = matrices.b.dot(i, z);
    c[i] = matrices.c.dot(i, z);
    return a[i] * b[i] != c[i];
  }, 4096);
  if (unsatisfied < m)
    fail("synthesis: the witness does not satisfy constraint {} (a*b != c); no proof is made "
         "for an invalid witness", unsatisfied);
}

}  // namespace zk::r1cs
