// The FP64-limb Montgomery product (kernels/ff/fp64_mont.hpp) against mont_t's: for x, y below m,
// decode(mul(encode(x), encode(y))) = x y 2^(-52 L) mod m, computed with mont_t, on random pairs
// (RapidCheck), on edge values (0, 1, m - 1, m - 2, all-ones limbs below m) and along a chain of
// products; encode and decode are inverse.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <vector>

#include "kernels/ff/fp64_mont.hpp"
#include "tests/arith/generators.hpp"

namespace zk::testing {
namespace {

template <class F, int L>
struct Fp64Field {
  using P = typename F::params;
  using Element = ff::fp64::Element<P, L>;
  using Words = std::array<uint64_t, F::N>;

  static Words canonical(const F& x) {
    Words words;
    x.to_canonical(words.data());
    return words;
  }
  static F from_words(const Words& words) { return F::from_canonical(words.data()); }
  // 2^(-52 L) mod m, for the expected products.
  static F inverse_of_r() { return F::from_u64(2).pow_u64(ff::fp64::limb_bits * L).inverse(); }

  // The FP64 product of x and y read back as an integer, and what it must be.
  static void expect_product(const Words& x, const Words& y) {
    Words got;
    ff::fp64::decode(ff::fp64::mul(ff::fp64::encode<P, L>(x.data()), ff::fp64::encode<P, L>(y.data())), got.data());
    const Words want = canonical(from_words(x) * from_words(y) * inverse_of_r());
    EXPECT_EQ(got, want);
  }
};

template <class F, int L>
std::vector<std::array<uint64_t, F::N>> edge_values() {
  using Words = std::array<uint64_t, F::N>;
  Words zero{}, one{}, m{};
  one[0] = 1;
  for (int w = 0; w < F::N; ++w) m[w] = F::params::modulus(w);
  Words m_minus_1 = m, m_minus_2 = m;
  m_minus_1[0] -= 1;
  m_minus_2[0] -= 2;
  std::vector<Words> values{zero, one, m_minus_1, m_minus_2};
  for (int limbs = 1; limbs < L; ++limbs) {  // 2^(52 limbs) - 1 where below m
    Words ones{};
    for (int bit = 0; bit < ff::fp64::limb_bits * limbs && bit < 64 * F::N; ++bit) ones[bit / 64] |= uint64_t{1} << (bit % 64);
    if (F::is_below_modulus(ones.data())) values.push_back(ones);
  }
  return values;
}

template <class F, int L>
void check_edge_products() {
  const auto values = edge_values<F, L>();
  for (const auto& x : values)
    for (const auto& y : values) Fp64Field<F, L>::expect_product(x, y);
}

TEST(Fp64Mont, EdgeProductsEqualMontT) {
  check_edge_products<Fp, 8>();
  check_edge_products<Fr, 5>();
}

RC_GTEST_PROP(Fp64Mont, FpProductsEqualMontT, ()) {
  using Field = Fp64Field<Fp, 8>;
  Field::expect_product(Field::canonical(*arbitrary_field<Fp>()), Field::canonical(*arbitrary_field<Fp>()));
}

RC_GTEST_PROP(Fp64Mont, FrProductsEqualMontT, ()) {
  using Field = Fp64Field<Fr, 5>;
  Field::expect_product(Field::canonical(*arbitrary_field<Fr>()), Field::canonical(*arbitrary_field<Fr>()));
}

RC_GTEST_PROP(Fp64Mont, EncodeThenDecodeIsTheIdentity, ()) {
  using Field = Fp64Field<Fp, 8>;
  const auto x = Field::canonical(*arbitrary_field<Fp>());
  Field::Words back;
  ff::fp64::decode(ff::fp64::encode<FpParams, 8>(x.data()), back.data());
  RC_ASSERT(back == x);
}

TEST(Fp64Mont, AChainOfProductsStaysEqualToMontT) {
  using Field = Fp64Field<Fp, 8>;
  Rng rng(11);
  const Fp y = rng.field<Fp>(), step = y * Field::inverse_of_r();
  Fp want = rng.field<Fp>();
  const auto y_words = Field::canonical(y);
  auto x = ff::fp64::encode<FpParams, 8>(Field::canonical(want).data());
  const auto y_limbs = ff::fp64::encode<FpParams, 8>(y_words.data());
  for (int i = 0; i < 2000; ++i) {
    x = ff::fp64::mul(x, y_limbs);
    want = want * step;
  }
  Field::Words got;
  ff::fp64::decode(x, got.data());
  EXPECT_EQ(got, Field::canonical(want));
}

}  // namespace
}  // namespace zk::testing
