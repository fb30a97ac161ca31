// CPU NTT: round trips, agreement with naive polynomial evaluation, and the coset transform.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "kernels/ntt/ntt_cpu.hpp"
#include "tests/arith/generators.hpp"

namespace zk::testing {
namespace {

std::vector<Fr> random_vector(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<Fr> v(n);
  for (auto& x : v) x = rng.field<Fr>();
  return v;
}

Fr evaluate(const std::vector<Fr>& coeffs, const Fr& x) {
  Fr acc = Fr::zero();
  for (size_t i = coeffs.size(); i-- > 0;) acc = acc * x + coeffs[i];
  return acc;
}

RC_GTEST_PROP(Ntt, InverseUndoesForward, (uint64_t seed)) {
  int lg = *rc::gen::inRange(0, 13);
  ntt::Domain d(lg);
  auto v = random_vector(d.n, seed), w = v;
  ntt::ntt(w, d);
  ntt::intt(w, d);
  RC_ASSERT(v == w);
}

RC_GTEST_PROP(Ntt, MatchesNaiveEvaluation, (uint64_t seed)) {
  int lg = *rc::gen::inRange(0, 8);
  ntt::Domain d(lg);
  auto coeffs = random_vector(d.n, seed), evals = coeffs;
  ntt::ntt(evals, d);
  for (size_t i = 0; i < d.n; ++i) RC_ASSERT(evals[i] == evaluate(coeffs, d.omega.pow_u64(i)));
}

RC_GTEST_PROP(Ntt, CosetEvaluatesOnShiftedPoints, (uint64_t seed)) {
  int lg = *rc::gen::inRange(1, 7);
  ntt::Domain d(lg);
  auto coeffs = random_vector(d.n, seed), evals = coeffs;
  ntt::coset_ntt(evals, d, d.coset_shift);
  for (size_t i = 0; i < d.n; ++i)
    RC_ASSERT(evals[i] == evaluate(coeffs, d.coset_shift * d.omega.pow_u64(i)));
}

TEST(Ntt, DomainRoots) {
  for (int lg : {1, 5, 20, 32}) {
    Fr w = ntt::root_of_unity(lg);
    Fr x = w;
    for (int i = 0; i < lg - 1; ++i) x = x.sqr();
    EXPECT_EQ(x, -Fr::one()) << "omega_2^" << lg << " must have order exactly 2^" << lg;
  }
  ntt::Domain d(10);
  EXPECT_EQ(d.coset_shift.sqr(), d.omega);
}

TEST(Ntt, LargeRoundTripIsParallelSafe) {
  ntt::Domain d(16);
  auto v = random_vector(d.n, 99), w = v;
  ntt::ntt(w, d);
  EXPECT_NE(v, w);
  ntt::intt(w, d);
  EXPECT_EQ(v, w);
}

}  // namespace
}  // namespace zk::testing
