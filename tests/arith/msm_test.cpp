// CPU MSM against the naive sum, including zero/one/edge scalars and points at infinity.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <vector>

#include "kernels/msm/pippenger_cpu.hpp"
#include "tests/arith/generators.hpp"

namespace zk::testing {
namespace {

template <class Curve>
ec::jacobian_t<Curve> naive_msm(const std::vector<ec::affine_t<Curve>>& bases, const std::vector<Fr>& scalars) {
  auto sum = ec::jacobian_t<Curve>::infinity();
  for (size_t i = 0; i < bases.size(); ++i) sum += mul(bases[i], scalars[i]);
  return sum;
}

// Scalars drawn to hit the edges: 0, 1, -1 (= r-1), small, near r, and uniform.
Fr edge_scalar(Rng& rng) {
  switch (rng.below(6)) {
    case 0: return Fr::zero();
    case 1: return Fr::one();
    case 2: return -Fr::one();
    case 3: return Fr::from_u64(rng.below(1000));
    case 4: return -Fr::from_u64(rng.below(1000) + 2);
    default: return rng.field<Fr>();
  }
}

template <class Curve>
std::vector<ec::affine_t<Curve>> random_bases(size_t n, Rng& rng, const ec::affine_t<Curve>& g) {
  std::vector<ec::affine_t<Curve>> bases(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t kind = rng.below(10);
    if (kind == 0) bases[i] = ec::affine_t<Curve>::infinity();
    else if (kind == 1 && i > 0) bases[i] = bases[rng.below(i)];  // repeated base
    else bases[i] = mul(g, rng.field<Fr>()).to_affine();
  }
  return bases;
}

template <class Curve>
void check_msm(uint64_t seed, size_t n, const ec::affine_t<Curve>& g) {
  Rng rng(seed);
  auto bases = random_bases<Curve>(n, rng, g);
  std::vector<Fr> scalars(n);
  for (auto& s : scalars) s = edge_scalar(rng);
  auto expected = naive_msm<Curve>(bases, scalars);
  RC_ASSERT(msm::msm<Curve>(std::span<const ec::affine_t<Curve>>(bases), scalars) == expected);
  msm::SplitCounts counts;
  RC_ASSERT(msm::msm_split<Curve>(std::span<const ec::affine_t<Curve>>(bases), scalars, &counts) == expected);
  RC_ASSERT(counts.zeros + counts.ones + counts.significant == n);
}

RC_GTEST_PROP(Msm, G1MatchesNaiveSum, (uint64_t seed)) {
  check_msm<G1Curve>(seed, *rc::gen::inRange<size_t>(0, 300), g1_generator());
}
RC_GTEST_PROP(Msm, G2MatchesNaiveSum, (uint64_t seed)) {
  check_msm<G2Curve>(seed, *rc::gen::inRange<size_t>(0, 60), g2_generator());
}

TEST(Msm, AllZeroAndAllOneScalars) {
  Rng rng(5);
  auto bases = random_bases<G1Curve>(777, rng, g1_generator());
  std::vector<Fr> zeros(bases.size(), Fr::zero()), ones(bases.size(), Fr::one());
  EXPECT_TRUE(msm::msm<G1Curve>(std::span<const G1Affine>(bases), zeros).is_infinity());
  auto sum = msm::sum_points<G1Curve>(std::span<const G1Affine>(bases));
  EXPECT_EQ(msm::msm<G1Curve>(std::span<const G1Affine>(bases), ones), sum);
  EXPECT_EQ(naive_msm<G1Curve>(bases, ones), sum);
}

TEST(Msm, LargerNonPowerOfTwoAcrossThreads) {
  Rng rng(11);
  size_t n = 5000 + 37;
  auto bases = random_bases<G1Curve>(n, rng, g1_generator());
  std::vector<Fr> scalars(n);
  for (auto& s : scalars) s = edge_scalar(rng);
  EXPECT_EQ(msm::msm<G1Curve>(std::span<const G1Affine>(bases), scalars), naive_msm<G1Curve>(bases, scalars));
}

TEST(Msm, SignedDigitsRecomposeTheScalar) {
  Rng rng(3);
  for (int c : {2, 5, 8, 13, 16}) {
    for (int trial = 0; trial < 20; ++trial) {
      Fr k = trial == 0 ? -Fr::one() : rng.field<Fr>();
      msm::Scalar256 s;
      k.to_canonical(s.limbs);
      Fr recomposed = Fr::zero(), radix = Fr::from_u64(uint64_t{1} << c), weight = Fr::one();
      for (int w = 0; w < msm::CpuMsmPolicy::windows(c); ++w) {
        int32_t d = msm::signed_digit(s, w, c);
        ASSERT_LE(std::abs(d), 1 << (c - 1));
        recomposed += (d >= 0 ? Fr::from_u64(d) : -Fr::from_u64(-d)) * weight;
        weight = weight * radix;
      }
      EXPECT_EQ(recomposed, k) << "window bits " << c;
    }
  }
}

}  // namespace
}  // namespace zk::testing
