// The pairing: bilinearity, non-degeneracy, and e(alpha, beta) equal to snarkjs's vk_alphabeta_12.
#include <fstream>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/groth16/pairing.hpp"
#include "engine/util/decimal.hpp"
#include "tests/arith/generators.hpp"

namespace zk::testing {
namespace {

using groth16::pairing;

RC_GTEST_PROP(Pairing, Bilinear, (uint64_t s1, uint64_t s2)) {
  Fr a = Rng(s1).field<Fr>(), b = Rng(s2).field<Fr>();
  Fp12 base = pairing(g1_generator(), g2_generator());
  uint64_t ab[4];
  (a * b).to_canonical(ab);
  RC_ASSERT(pairing(mul(g1_generator(), a).to_affine(), mul(g2_generator(), b).to_affine()) == base.pow(ab, 4));
}

TEST(Pairing, NonDegenerateAndOfOrderR) {
  Fp12 e = pairing(g1_generator(), g2_generator());
  EXPECT_FALSE(e.is_one());
  uint64_t r[4];
  for (int i = 0; i < 4; ++i) r[i] = fr_modulus(i);
  EXPECT_TRUE(e.pow(r, 4).is_one());
}

TEST(Pairing, InfinityGivesOne) {
  EXPECT_TRUE(pairing(G1Affine::infinity(), g2_generator()).is_one());
  EXPECT_TRUE(pairing(g1_generator(), G2Affine::infinity()).is_one());
}

TEST(Pairing, MultiPairingOfInversesIsOne) {
  const groth16::PairingInput pairs[] = {{g1_generator(), g2_generator()}, {-g1_generator(), g2_generator()}};
  EXPECT_TRUE(groth16::multi_pairing(pairs).is_one());
}

TEST(Pairing, MatchesSnarkjsAlphaBeta) {
  std::ifstream in(ZKPIPE_TEST_DATA "/snarkjs_mulchain16000_vk.json");
  ASSERT_TRUE(in) << "missing test data";
  auto vk = nlohmann::json::parse(in);
  auto fp = [](const nlohmann::json& v) { return from_decimal<Fp>(v.get<std::string>(), "vk"); };
  auto fp2 = [&](const nlohmann::json& v) { return Fp2{fp(v[0]), fp(v[1])}; };
  G1Affine alpha{fp(vk["vk_alpha_1"][0]), fp(vk["vk_alpha_1"][1])};
  G2Affine beta{fp2(vk["vk_beta_2"][0]), fp2(vk["vk_beta_2"][1])};
  Fp12 e = pairing(alpha, beta);
  const Fp6* halves[] = {&e.c0, &e.c1};
  for (int i = 0; i < 2; ++i) {
    const Fp2* c[] = {&halves[i]->c0, &halves[i]->c1, &halves[i]->c2};
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(to_decimal(c[k]->c0), vk["vk_alphabeta_12"][i][k][0].get<std::string>());
      EXPECT_EQ(to_decimal(c[k]->c1), vk["vk_alphabeta_12"][i][k][1].get<std::string>());
    }
  }
}

}  // namespace
}  // namespace zk::testing
