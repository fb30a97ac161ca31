// domain_size.hpp — the size of a proof's evaluation domain, the one rule for the engine's setup
// and prover and for the model that simulates them: the constraint rows plus snarkjs's rows of the
// public inputs (one for ONE and one per public input) fit in a power of two.
#pragma once
#include <cstddef>

namespace zk::r1cs {

// log2 of the smallest power of two strictly greater than constraints + public inputs (snarkjs).
constexpr int domain_lg_size(size_t num_constraints, size_t num_public) {
  int lg = 0;
  while ((size_t{1} << lg) <= num_constraints + num_public) ++lg;
  return lg;
}

}  // namespace zk::r1cs
