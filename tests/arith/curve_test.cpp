// Group laws of G1 and G2, their generators, orders and cofactor, and the subgroup check.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/util/decimal.hpp"
#include "kernels/ec/xyzz.hpp"
#include "tests/arith/generators.hpp"

namespace zk::testing {
namespace {

template <class Point>
void check_group_laws(const Point& p, const Point& q, const Point& s) {
  RC_ASSERT(p + q == q + p);
  RC_ASSERT((p + q) + s == p + (q + s));
  RC_ASSERT(p + Point::infinity() == p);
  RC_ASSERT((p - p).is_infinity());
  RC_ASSERT(p + p == p.dbl());
  RC_ASSERT((p + q).is_on_curve());
  // Mixed addition agrees with the general formula.
  RC_ASSERT(p + q.to_affine() == p + q);
  RC_ASSERT(p + p.to_affine() == p.dbl());
}

RC_GTEST_PROP(GroupLaws, G1, ()) {
  auto gen = arbitrary_point<G1>(g1_generator());
  check_group_laws(*gen, *gen, *gen);
}
RC_GTEST_PROP(GroupLaws, G2, ()) {
  auto gen = arbitrary_point<G2>(g2_generator());
  check_group_laws(*gen, *gen, *gen);
}
RC_GTEST_PROP(GroupLaws, ScalarMultiplicationIsLinear, (uint64_t s1, uint64_t s2)) {
  Fr a = Rng(s1).field<Fr>(), b = Rng(s2).field<Fr>();
  G1 g = G1::from_affine(g1_generator());
  RC_ASSERT(mul(g, a) + mul(g, b) == mul(g, a + b));
  RC_ASSERT(mul(mul(g, a), b) == mul(g, a * b));
}

// XYZZ accumulation (the GPU MSM's buckets) equals Jacobian accumulation, through the cases
// that take another formula: a start at infinity, adding the same point (doubling), adding its
// negative (infinity), adding infinity, and continuing from infinity.
template <class Curve>
void check_xyzz_accumulation(const ec::jacobian_t<Curve>& p, const ec::jacobian_t<Curve>& q) {
  using Affine = ec::affine_t<Curve>;
  const Affine a = p.to_affine(), b = q.to_affine();
  const Affine sequence[] = {a, b, b, -b, -a, Affine::infinity(), a, a, -a, -a, b};
  ec::xyzz_t<Curve> acc = ec::xyzz_t<Curve>::infinity();
  ec::jacobian_t<Curve> expected = ec::jacobian_t<Curve>::infinity();
  for (const Affine& point : sequence) {
    acc += point;
    expected += point;
    RC_ASSERT(acc.to_jacobian() == expected);
    RC_ASSERT(acc.to_jacobian().is_on_curve());
  }
}

RC_GTEST_PROP(XyzzAccumulation, G1, ()) {
  auto gen = arbitrary_point<G1>(g1_generator());
  check_xyzz_accumulation(*gen, *gen);
}
RC_GTEST_PROP(XyzzAccumulation, G2, ()) {
  auto gen = arbitrary_point<G2>(g2_generator());
  check_xyzz_accumulation(*gen, *gen);
}

// XYZZ sums of XYZZ points (the GPU MSM's folds and bucket reduction) equal Jacobian sums, with
// ZZ != 1 on both sides, through the cases that take another formula: either side at infinity,
// one point in two representations (doubling), opposite points (infinity).
template <class Curve>
void check_xyzz_sums(const ec::jacobian_t<Curve>& p, const ec::jacobian_t<Curve>& q) {
  using Xyzz = ec::xyzz_t<Curve>;
  const auto via = [](const ec::jacobian_t<Curve>& point, const ec::jacobian_t<Curve>& step) {
    return Xyzz::from_affine((point - step).to_affine()) + step.to_affine();  // point, reached by a sum
  };
  const Xyzz xp = via(p, q), xq = via(q, p), infinity = Xyzz::infinity();
  RC_ASSERT((xp + xq).to_jacobian() == p + q);
  RC_ASSERT((xp + via(p, p.dbl())).to_jacobian() == p.dbl());
  RC_ASSERT(xp.dbl().to_jacobian() == p.dbl());
  RC_ASSERT((xp + via(-p, q)).is_infinity());
  RC_ASSERT((infinity + xq).to_jacobian() == q);
  RC_ASSERT((xq + infinity).to_jacobian() == q);
  RC_ASSERT(infinity.dbl().is_infinity());
  RC_ASSERT((xp + xq).to_jacobian().is_on_curve());
}

RC_GTEST_PROP(XyzzSums, G1, ()) {
  auto gen = arbitrary_point<G1>(g1_generator());
  check_xyzz_sums(*gen, *gen);
}
RC_GTEST_PROP(XyzzSums, G2, ()) {
  auto gen = arbitrary_point<G2>(g2_generator());
  check_xyzz_sums(*gen, *gen);
}

std::vector<uint64_t> order_minus_one() {
  std::vector<uint64_t> k(4);
  for (int i = 0; i < 4; ++i) k[i] = fr_modulus(i);
  k[0] -= 1;
  return k;
}

TEST(GroupConstants, GeneratorsHaveOrderR) {
  G1 g1 = G1::from_affine(g1_generator());
  EXPECT_TRUE(g1.is_on_curve());
  EXPECT_TRUE(in_prime_order_subgroup(g1_generator()));
  EXPECT_EQ(g1.mul(order_minus_one().data(), 4), -g1);
  G2 g2 = G2::from_affine(g2_generator());
  EXPECT_TRUE(in_prime_order_subgroup(g2_generator()));
  EXPECT_EQ(g2.mul(order_minus_one().data(), 4), -g2);
}

TEST(GroupConstants, G2GeneratorIsSnarkjsGamma) {
  auto vk = nlohmann::json::parse(R"(["352701069587466618187139116011060144890029952792775240219908644239793785735715026873347600343865175952761926303160",
    "3059144344244213709971259814753781636986470325476647558659373206291635324768958432433509563104347017837885763365758"])");
  EXPECT_EQ(to_decimal(g2_generator().x.c0), vk[0].get<std::string>());
  EXPECT_EQ(to_decimal(g2_generator().x.c1), vk[1].get<std::string>());
}

// A point of E(Fp) outside G1: found by lifting x = 1, 2, ... (p = 3 mod 4, so sqrt is a power).
G1Affine point_off_subgroup() {
  constexpr uint64_t sqrt_exponent[] = {0xee7fbfffffffeaab, 0x07aaffffac54ffff, 0xd9cc34a83dac3d89,
                                        0xd91dd2e13ce144af, 0x92c6e9ed90d2eb35, 0x0680447a8e5ff9a6};
  for (uint64_t x = 1;; ++x) {
    Fp fx = Fp::from_u64(x), rhs = fx.sqr() * fx + G1Curve::b();
    Fp y = rhs.pow(sqrt_exponent, 6);
    if (y.sqr() == rhs) return {fx, y};
  }
}

TEST(GroupConstants, CofactorClearsIntoTheSubgroup) {
  G1Affine p = point_off_subgroup();
  ASSERT_TRUE(p.is_on_curve());
  EXPECT_FALSE(in_prime_order_subgroup(p));  // the check has teeth
  constexpr uint64_t cofactor[] = {0x8c00aaab0000aaab, 0x396c8c005555e156};
  G1 cleared = G1::from_affine(p).mul(cofactor, 2);
  EXPECT_FALSE(cleared.is_infinity());
  EXPECT_TRUE(in_prime_order_subgroup(cleared.to_affine()));
}

TEST(GroupConstants, InfinityEncodingIsAllZero) {
  G1Affine inf = G1::infinity().to_affine();
  EXPECT_TRUE(inf.x.is_zero() && inf.y.is_zero());
  EXPECT_TRUE(inf.is_on_curve());
  EXPECT_FALSE(G1Affine({Fp::zero(), Fp::one()}).is_on_curve());
}

}  // namespace
}  // namespace zk::testing
