// Field laws and known constants of Fp, Fr and the Fp2/Fp6/Fp12 tower.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "engine/util/decimal.hpp"
#include "kernels/ff/fp12.hpp"
#include "tests/arith/generators.hpp"

namespace zk::testing {
namespace {

template <class F>
void check_field_laws(const F& a, const F& b, const F& c) {
  RC_ASSERT(a + b == b + a);
  RC_ASSERT(a * b == b * a);
  RC_ASSERT((a + b) + c == a + (b + c));
  RC_ASSERT((a * b) * c == a * (b * c));
  RC_ASSERT(a * (b + c) == a * b + a * c);
  RC_ASSERT(a - a == F::zero());
  RC_ASSERT(a + F::zero() == a);
  RC_ASSERT(a * F::one() == a);
  RC_ASSERT(a.dbl() == a + a);
  RC_ASSERT(-(-a) == a);
  RC_ASSERT(a.sqr() == a * a);
  if (!a.is_zero()) RC_ASSERT(a * a.inverse() == F::one());
}

RC_GTEST_PROP(FieldLaws, Fp, ()) {
  check_field_laws(*arbitrary_field<Fp>(), *arbitrary_field<Fp>(), *arbitrary_field<Fp>());
}
RC_GTEST_PROP(FieldLaws, Fr, ()) {
  check_field_laws(*arbitrary_field<Fr>(), *arbitrary_field<Fr>(), *arbitrary_field<Fr>());
}
RC_GTEST_PROP(FieldLaws, Fp2, ()) {
  auto g = [] { return Fp2{*arbitrary_field<Fp>(), *arbitrary_field<Fp>()}; };
  check_field_laws(g(), g(), g());
}

Fp12 random_fp12(uint64_t seed) {
  Rng rng(seed);
  auto f2 = [&] { return Fp2{rng.field<Fp>(), rng.field<Fp>()}; };
  return {{f2(), f2(), f2()}, {f2(), f2(), f2()}};
}

RC_GTEST_PROP(FieldLaws, Fp12MultiplicativeGroup, (uint64_t s1, uint64_t s2, uint64_t s3)) {
  Fp12 a = random_fp12(s1), b = random_fp12(s2), c = random_fp12(s3);
  RC_ASSERT(a * b == b * a);
  RC_ASSERT((a * b) * c == a * (b * c));
  RC_ASSERT(a * a.inverse() == Fp12::one());
  RC_ASSERT(a.sqr() == a * a);
}

TEST(FieldConstants, MontgomeryRoundTripAndSmallValues) {
  Fp three = Fp::from_u64(3), five = Fp::from_u64(5);
  uint64_t out[6];
  (three * five).to_canonical(out);
  EXPECT_EQ(out[0], 15u);
  for (int i = 1; i < 6; ++i) EXPECT_EQ(out[i], 0u);
  EXPECT_EQ(to_decimal(Fr::from_u64(1234567)), "1234567");
}

TEST(FieldConstants, ModuliAsDecimals) {
  // p - 1 and r - 1 printed in decimal equal the published moduli minus one.
  EXPECT_EQ(to_decimal(-Fp::one()),
            "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559786");
  EXPECT_EQ(to_decimal(-Fr::one()),
            "52435875175126190479447740508185965837690552500527637822603658699938581184512");
}

TEST(FieldConstants, DecimalParsingRejectsOutOfRange) {
  EXPECT_THROW(from_decimal<Fr>("52435875175126190479447740508185965837690552500527637822603658699938581184513", "t"), Error);
  EXPECT_THROW(from_decimal<Fr>("12a", "t"), Error);
  EXPECT_THROW(from_decimal<Fr>("", "t"), Error);
  EXPECT_EQ(from_decimal<Fr>("52435875175126190479447740508185965837690552500527637822603658699938581184512", "t"), -Fr::one());
}

TEST(FieldConstants, RootsOfUnityAreFfjavascripts) {
  // omega_{2^32} = 5^((r-1)/2^32) has order exactly 2^32.
  Fr w = field_from_table<Fr>(fr_root_of_unity_2_32);
  Fr x = w;
  for (int i = 0; i < 31; ++i) x = x.sqr();
  EXPECT_EQ(x, -Fr::one());
  EXPECT_EQ(to_decimal(w),
            "937917089079007706106976984802249742464848817460758522850752807661925904159");
}

}  // namespace
}  // namespace zk::testing
