#include "engine/groth16/pairing.hpp"

#include <array>
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

// Inverts every element with one field inversion (Montgomery's trick); none may be zero.
void invert_all(std::vector<Fp2>& values) {
  std::vector<Fp2> prefix(values.size());
  Fp2 acc = Fp2::one();
  for (size_t i = 0; i < values.size(); ++i) prefix[i] = acc, acc *= values[i];
  Fp2 inv = acc.inverse();
  for (size_t i = values.size(); i-- > 0;) {
    Fp2 value_inv = inv * prefix[i];
    inv *= values[i];
    values[i] = value_inv;
  }
}

// f <- f * l_{T,T}(P); T <- 2T, for every state; one inversion for all slopes.
void double_steps(Fp12& f, std::vector<MillerState>& states, std::vector<Fp2>& scratch) {
  for (size_t i = 0; i < states.size(); ++i) scratch[i] = states[i].t.y.dbl();
  invert_all(scratch);
  for (size_t i = 0; i < states.size(); ++i) {
    MillerState& s = states[i];
    Fp2 x2 = s.t.x.sqr();
    Fp2 slope = (x2.dbl() + x2) * scratch[i];
    f *= line_value(slope, s.t, s.p);
    Fp2 x3 = slope.sqr() - s.t.x.dbl();
    s.t = {x3, slope * (s.t.x - x3) - s.t.y};
  }
}

// f <- f * l_{T,Q}(P); T <- T + Q, for every state. T = +-Q never occurs for Q of order r inside
// the loop.
void add_steps(Fp12& f, std::vector<MillerState>& states, std::vector<Fp2>& scratch) {
  for (size_t i = 0; i < states.size(); ++i) scratch[i] = states[i].q.x - states[i].t.x;
  invert_all(scratch);
  for (size_t i = 0; i < states.size(); ++i) {
    MillerState& s = states[i];
    Fp2 slope = (s.q.y - s.t.y) * scratch[i];
    f *= line_value(slope, s.t, s.p);
    Fp2 x3 = slope.sqr() - s.t.x - s.q.x;
    s.t = {x3, slope * (s.t.x - x3) - s.t.y};
  }
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


// The p^2-power Frobenius. It fixes Fp2 and multiplies the basis element w^k (k = 0..5) by
// gamma^k, gamma = w^(p^2 - 1) = xi^((p^2 - 1)/6).
Fp12 frobenius_p2(const Fp12& f) {
  static const std::array<Fp2, 6> gamma_powers = [] {
    uint64_t e[std::size(p_squared)];
    unsigned __int128 rest = 0;
    for (size_t i = std::size(p_squared); i-- > 0;) {  // (p^2 - 1) / 6; p^2 is odd, so -1 only clears bit 0
      rest = rest << 64 | (p_squared[i] & ~uint64_t{i == 0});
      e[i] = static_cast<uint64_t>(rest / 6);
      rest %= 6;
    }
    Fp2 gamma = ff::power(Fp2{Fp::one(), Fp::one()}, e, std::size(e));
    std::array<Fp2, 6> powers{Fp2::one()};
    for (size_t k = 1; k < powers.size(); ++k) powers[k] = powers[k - 1] * gamma;
    return powers;
  }();
  const auto& g = gamma_powers;
  return {{f.c0.c0, f.c0.c1 * g[2], f.c0.c2 * g[4]}, {f.c1.c0 * g[1], f.c1.c1 * g[3], f.c1.c2 * g[5]}};
}

// Squaring in the cyclotomic subgroup (order dividing p^4 - p^2 + 1), Granger and Scott, PKC 2010,
// section 3.2: with s = w^3 (s^2 = xi), f = A + B w + C w^2 over Fp4 = Fp2[s], A = c0.c0 + c1.c1 s,
// B = c1.c0 + c0.c2 s, C = c0.c1 + c1.c2 s, and f^2 = (3A^2 - 2 conj A) + (3 s C^2 + 2 conj B) w
// + (3B^2 - 2 conj C) w^2: six Fp2 squarings where a general product takes eighteen Fp2 products.
Fp12 cyclotomic_sqr(const Fp12& f) {
  // x^2 + xi y^2 and 2xy, the two coefficients of (x + y s)^2.
  auto fp4_sqr = [](const Fp2& x, const Fp2& y, Fp2& even, Fp2& odd) {
    Fp2 x2 = x.sqr(), y2 = y.sqr();
    even = y2.mul_by_xi() + x2;
    odd = (x + y).sqr() - x2 - y2;
  };
  Fp2 a0, a1, b0, b1, c0, c1;
  fp4_sqr(f.c0.c0, f.c1.c1, a0, a1);
  fp4_sqr(f.c1.c0, f.c0.c2, b0, b1);
  fp4_sqr(f.c0.c1, f.c1.c2, c0, c1);
  auto triple_minus_twice = [](const Fp2& t, const Fp2& x) { return (t - x).dbl() + t; };  // 3t - 2x
  auto triple_plus_twice = [](const Fp2& t, const Fp2& x) { return (t + x).dbl() + t; };   // 3t + 2x
  return {{triple_minus_twice(a0, f.c0.c0), triple_minus_twice(b0, f.c0.c1), triple_minus_twice(c0, f.c0.c2)},
          {triple_plus_twice(c1.mul_by_xi(), f.c1.c0), triple_plus_twice(a1, f.c1.c1), triple_plus_twice(b1, f.c1.c2)}};
}

}  // namespace

Fp12 miller_loop(std::span<const PairingInput> pairs) {
  std::vector<MillerState> states;
  for (const auto& [p, q] : pairs)
    if (!p.is_infinity() && !q.is_infinity()) states.push_back({p, q, q});
  Fp12 f = Fp12::one();
  if (states.empty()) return f;
  // Bits of |x| below the leading one, most significant first.
  std::vector<Fp2> scratch(states.size());
  for (int bit = 62; bit >= 0; --bit) {
    f = f.sqr();
    double_steps(f, states, scratch);
    if ((bls12_381::curve_x_abs >> bit) & 1) add_steps(f, states, scratch);
  }
  // x < 0: f_{x} = 1/f_{|x|}; the conjugate is the inverse up to the final exponentiation.
  return bls12_381::curve_x_is_negative ? f.conjugate() : f;
}

Fp12 final_exponentiation(const Fp12& f) {
  Fp12 easy = f.conjugate() * f.inverse();  // f^(p^6 - 1)
  easy = frobenius_p2(easy) * easy;         // ^(p^2 + 1)
  // ^(3(p^4-p^2+1)/r) by square-and-multiply with cyclotomic squarings.
  Fp12 r = Fp12::one();
  for (int i = std::size(hard_part_exponent) - 1; i >= 0; --i)
    for (int b = 63; b >= 0; --b) {
      r = cyclotomic_sqr(r);
      if ((hard_part_exponent[i] >> b) & 1) r *= easy;
    }
  return r;
}

Fp12 multi_pairing(std::span<const PairingInput> pairs) {
  return final_exponentiation(miller_loop(pairs));
}

Fp12 pairing(const G1Affine& p, const G2Affine& q) {
  PairingInput input{p, q};
  return multi_pairing(std::span(&input, 1));
}

}  // namespace zk::groth16
