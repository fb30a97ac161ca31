// bls12-381.hpp (ec) — the groups G1 (over Fp) and G2 (over Fp2, the M-type sextic twist
// y^2 = x^3 + 4(1+u)) of BLS12-381 as instances of the generic point templates, with their
// generators, scalar multiplication by Fr elements and subgroup membership checks.
#pragma once
#include "kernels/ec/jacobian.hpp"
#include "kernels/ff/fp2.hpp"

namespace zk::bls12_381 {

struct G1Curve {
  using field = Fp;
  static ZK_HD Fp b() {
    constexpr uint64_t four_mont[] = {0xaa270000000cfff3, 0x53cc0032fc34000a, 0x478fe97a6b0a807f,
                                      0xb1d37ebee6ba24d7, 0x8ec9733bbf78ab2f, 0x09d645513d83de7e};
    Fp r;
    for (int i = 0; i < 6; ++i) r.l[i] = four_mont[i];
    return r;
  }
};
struct G2Curve {
  using field = Fp2;
  static ZK_HD Fp2 b() { return {G1Curve::b(), G1Curve::b()}; }  // 4(1+u)
};

using G1Affine = ec::affine_t<G1Curve>;
using G1 = ec::jacobian_t<G1Curve>;
using G2Affine = ec::affine_t<G2Curve>;
using G2 = ec::jacobian_t<G2Curve>;

inline G1Affine g1_generator() {
  return {field_from_table<Fp>(g1_x), field_from_table<Fp>(g1_y)};
}
inline G2Affine g2_generator() {
  return {{field_from_table<Fp>(g2_x_c0), field_from_table<Fp>(g2_x_c1)},
          {field_from_table<Fp>(g2_y_c0), field_from_table<Fp>(g2_y_c1)}};
}

// Scalar multiplication by an element of Fr (any representation of the residue).
template <class Point>
ZK_HD Point mul(const Point& p, const Fr& k) {
  uint64_t s[4];
  k.to_canonical(s);
  return p.mul(s, 4);
}
template <class Curve>
ZK_HD ec::jacobian_t<Curve> mul(const ec::affine_t<Curve>& p, const Fr& k) {
  return mul(ec::jacobian_t<Curve>::from_affine(p), k);
}

// True when a point loaded raw (from a key file) is a valid encoding: reduced coordinates on the
// curve (the all-zero infinity included). Says nothing of the subgroup.
template <class Curve>
ZK_HD bool is_valid_encoding(const ec::affine_t<Curve>& p) {
  return p.x.is_reduced() && p.y.is_reduced() && p.is_on_curve();
}

// True when p lies in the order-r subgroup: [r]p = O (the simple test; speed is not needed on
// the paths that call it: verifying keys, proofs, generators).
template <class Curve>
ZK_HD bool in_prime_order_subgroup(const ec::affine_t<Curve>& p) {
  uint64_t r[4];
  for (int i = 0; i < 4; ++i) r[i] = fr_modulus(i);
  return p.is_on_curve() && ec::jacobian_t<Curve>::from_affine(p).mul(r, 4).is_infinity();
}

}  // namespace zk::bls12_381
