#include "engine/groth16/pairing.hpp"

#include <vector>

namespace zk::groth16 {
namespace {

using bls12_381::Fp;
using bls12_381::Fp2;
using bls12_381::Fp6;

// The line through T with slope `slope` (on the twist), evaluated at P and scaled by w^3 (a factor
// in a proper subfield, which the final exponentiation removes). With the M-type untwist
// (x, y) -> (x w^-2, y w^-3) the line is (slope*xT - yT) - slope*xP v + yP v w.
Fp12 line_value(const Fp2& slope, const G2Affine& t, const G1Affine& p) {
  Fp12 l;
  l.c0 = {slope * t.x - t.y, -(slope * p.x), Fp2::zero()};
  l.c1 = {Fp2::zero(), Fp2{p.y, Fp::zero()}, Fp2::zero()};
  return l;
}

struct MillerState {
  G1Affine p;
  G2Affine q, t;
};

// f <- f * l_{T,T}(P); T <- 2T.
void double_step(Fp12& f, MillerState& s) {
  Fp2 x2 = s.t.x.sqr();
  Fp2 slope = (x2.dbl() + x2) * s.t.y.dbl().inverse();
  f *= line_value(slope, s.t, s.p);
  Fp2 x3 = slope.sqr() - s.t.x.dbl();
  s.t = {x3, slope * (s.t.x - x3) - s.t.y};
}

// f <- f * l_{T,Q}(P); T <- T + Q. T = +-Q never occurs for Q of order r inside the loop.
void add_step(Fp12& f, MillerState& s) {
  Fp2 slope = (s.q.y - s.t.y) * (s.q.x - s.t.x).inverse();
  f *= line_value(slope, s.t, s.p);
  Fp2 x3 = slope.sqr() - s.t.x - s.q.x;
  s.t = {x3, slope * (s.t.x - x3) - s.t.y};
}

// p^2 and 3(p^4 - p^2 + 1)/r, little-endian limbs. The factor 3 (coprime to r, so the pairing
// stays bilinear and non-degenerate) is what noble's and snarkjs's final exponentiation computes;
// with it our e(alpha, beta) equals snarkjs's vk_alphabeta_12 exactly (tested).
constexpr uint64_t p_squared[] = {
    0x26aa00001c718e39, 0x7ced6b1d76382eab, 0x162c338362113cfd, 0x66bf91ed3e71b743,
    0x292e85a87091a049, 0x1d68619c86185c7b, 0xf53149330978ef01, 0x50a62cfd16ddca6e,
    0x66e59e49349e8bd0, 0xe2dc90e50e7046b4, 0x4bd278eaa22f25e9, 0x02a437a4b8c35fc7};
constexpr uint64_t hard_part_exponent[] = {
    0xaf444bdcaaab2f6b, 0xefcb3800a61a66d5, 0xb116bba59a18123a, 0x554e727d129be6a3,
    0x8a65dbc1cc35fe5a, 0x6574220c23e5b6cc, 0x8c72178bc76a791c, 0xb415c7da454d4863,
    0x37d47f639b68a630, 0x6a6a2b0ab1c47526, 0x6c9ae9625394f594, 0x6163cbf00bf566e4,
    0x877c5e22f2639411, 0xb0f5836ba82b62de, 0xe3ae662e47a24ea0, 0x8d69012b6d183f47,
    0xbcf13296f7a83fce, 0x7b69b9acc2cc45ea, 0x4237aa494c159cdc, 0x002e3941b8817705};

}  // namespace

Fp12 miller_loop(std::span<const PairingInput> pairs) {
  std::vector<MillerState> states;
  for (const auto& [p, q] : pairs)
    if (!p.is_infinity() && !q.is_infinity()) states.push_back({p, q, q});
  Fp12 f = Fp12::one();
  if (states.empty()) return f;
  // Bits of |x| below the leading one, most significant first.
  for (int bit = 62; bit >= 0; --bit) {
    f = f.sqr();
    for (auto& s : states) double_step(f, s);
    if ((bls12_381::curve_x_abs >> bit) & 1)
      for (auto& s : states) add_step(f, s);
  }
  // x < 0: f_{x} = 1/f_{|x|}; the conjugate is the inverse up to the final exponentiation.
  return bls12_381::curve_x_is_negative ? f.conjugate() : f;
}

Fp12 final_exponentiation(const Fp12& f) {
  Fp12 easy = f.conjugate() * f.inverse();                         // f^(p^6 - 1)
  easy = easy.pow(p_squared, std::size(p_squared)) * easy;         // ^(p^2 + 1)
  return easy.pow(hard_part_exponent, std::size(hard_part_exponent));  // ^(3(p^4-p^2+1)/r)
}

Fp12 multi_pairing(std::span<const PairingInput> pairs) {
  return final_exponentiation(miller_loop(pairs));
}

Fp12 pairing(const G1Affine& p, const G2Affine& q) {
  PairingInput input{p, q};
  return multi_pairing(std::span(&input, 1));
}

}  // namespace zk::groth16
