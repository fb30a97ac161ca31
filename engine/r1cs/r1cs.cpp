#include "engine/r1cs/r1cs.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine/util/error.hpp"

namespace zk::r1cs {

int domain_lg_size(size_t num_constraints, size_t num_public) {
  int lg = 0;
  while ((size_t{1} << lg) <= num_constraints + num_public) ++lg;
  return lg;
}

namespace {
void check_public_first(bool private_seen) {
  if (private_seen)
    throw std::logic_error("circuit allocated a public input after a private one; "
                           "allocate every public input first");
}
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
  r1cs_.constraints.push_back({a, b, c});
}

WitnessEvaluator::WitnessEvaluator(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c)
    : a_(a), b_(b), c_(c) {
  if (a.size() != b.size() || a.size() != c.size())
    throw std::invalid_argument("WitnessEvaluator: a, b, c buffers differ in size");
}

Variable WitnessEvaluator::alloc_public(const Fr& value) {
  check_public_first(private_seen_);
  num_public_++;
  z_.push_back(value);
  return {static_cast<uint32_t>(z_.size() - 1)};
}

Variable WitnessEvaluator::alloc_private(const Fr& value) {
  private_seen_ = true;
  z_.push_back(value);
  return {static_cast<uint32_t>(z_.size() - 1)};
}

void WitnessEvaluator::enforce(const LC& a, const LC& b, const LC& c) {
  if (row_ >= a_.size())
    fail("synthesis: the circuit has more constraints than the proving key's domain of {} rows; "
         "the key was made for a different circuit or size", a_.size());
  Fr av = a.evaluate(z_), bv = b.evaluate(z_), cv = c.evaluate(z_);
  if (av * bv != cv)
    fail("synthesis: the witness does not satisfy constraint {} (a*b != c); no proof is made "
         "for an invalid witness", row_);
  a_[row_] = av;
  b_[row_] = bv;
  c_[row_] = cv;
  ++row_;
}

std::vector<Fr> WitnessEvaluator::finish() {
  if (row_ + num_public_ + 1 > a_.size())
    fail("synthesis: {} constraints and {} public inputs do not fit a domain of {} rows", row_,
         num_public_, a_.size());
  for (uint32_t s = 0; s <= num_public_; ++s) {
    a_[row_ + s] = z_[s];
    b_[row_ + s] = Fr::zero();
    c_[row_ + s] = Fr::zero();
  }
  size_t used = row_ + num_public_ + 1;
  std::fill(a_.begin() + used, a_.end(), Fr::zero());
  std::fill(b_.begin() + used, b_.end(), Fr::zero());
  std::fill(c_.begin() + used, c_.end(), Fr::zero());
  return std::move(z_);
}

}  // namespace zk::r1cs
