// jacobian.hpp — Jacobian projective points (x = X/Z^2, y = Y/Z^3) on y^2 = x^3 + b, with the
// complete set of cases handled: doubling, general and mixed (Jacobian + affine) addition,
// negation, scalar multiplication and conversion to affine. Z = 0 is the point at infinity.
// Formulas: dbl-2009-l, add-2007-bl, madd-2007-bl (Explicit-Formulas Database, a = 0).
#pragma once
#include <cstdint>

#include "kernels/ec/affine.hpp"

namespace zk::ec {

template <class Curve>
struct jacobian_t {
  using field = typename Curve::field;
  using affine = affine_t<Curve>;
  field X, Y, Z;

  static ZK_HD jacobian_t infinity() { return {field::one(), field::one(), field::zero()}; }
  static ZK_HD jacobian_t from_affine(const affine& a) {
    return a.is_infinity() ? infinity() : jacobian_t{a.x, a.y, field::one()};
  }
  ZK_HD bool is_infinity() const { return Z.is_zero(); }
  ZK_HD jacobian_t operator-() const { return {X, -Y, Z}; }

  ZK_HD affine to_affine() const {
    if (is_infinity()) return affine::infinity();
    field zi = Z.inverse(), zi2 = zi.sqr();
    return {X * zi2, Y * zi2 * zi};
  }
  // Equality of the points represented, whatever their Z.
  friend ZK_HD bool operator==(const jacobian_t& p, const jacobian_t& q) {
    if (p.is_infinity() || q.is_infinity()) return p.is_infinity() && q.is_infinity();
    field pz2 = p.Z.sqr(), qz2 = q.Z.sqr();
    return p.X * qz2 == q.X * pz2 && p.Y * qz2 * q.Z == q.Y * pz2 * p.Z;
  }
  friend ZK_HD bool operator!=(const jacobian_t& p, const jacobian_t& q) { return !(p == q); }
  ZK_HD bool is_on_curve() const {
    if (is_infinity()) return true;
    field z2 = Z.sqr(), z6 = z2.sqr() * z2;
    return Y.sqr() == X.sqr() * X + Curve::b() * z6;
  }

  ZK_HD jacobian_t dbl() const {
    if (is_infinity()) return *this;
    field a = X.sqr(), b = Y.sqr(), c = b.sqr();
    field d = ((X + b).sqr() - a - c).dbl();
    field e = a.dbl() + a, f = e.sqr();
    field x3 = f - d.dbl();
    field c8 = c.dbl().dbl().dbl();
    return {x3, e * (d - x3) - c8, (Y * Z).dbl()};
  }

  friend ZK_HD jacobian_t operator+(const jacobian_t& p, const jacobian_t& q) {
    if (p.is_infinity()) return q;
    if (q.is_infinity()) return p;
    field z1z1 = p.Z.sqr(), z2z2 = q.Z.sqr();
    field u1 = p.X * z2z2, u2 = q.X * z1z1;
    field s1 = p.Y * q.Z * z2z2, s2 = q.Y * p.Z * z1z1;
    field h = u2 - u1, r = (s2 - s1).dbl();
    if (h.is_zero()) return r.is_zero() ? p.dbl() : infinity();
    field i = h.dbl().sqr(), j = h * i, v = u1 * i;
    field x3 = r.sqr() - j - v.dbl();
    return {x3, r * (v - x3) - (s1 * j).dbl(), ((p.Z + q.Z).sqr() - z1z1 - z2z2) * h};
  }

  // Mixed addition with an affine point (Z2 = 1): the MSM's inner step.
  friend ZK_HD jacobian_t operator+(const jacobian_t& p, const affine& q) {
    if (q.is_infinity()) return p;
    if (p.is_infinity()) return from_affine(q);
    field z1z1 = p.Z.sqr();
    field u2 = q.x * z1z1, s2 = q.y * p.Z * z1z1;
    field h = u2 - p.X, r = (s2 - p.Y).dbl();
    if (h.is_zero()) return r.is_zero() ? p.dbl() : infinity();
    field hh = h.sqr(), i = hh.dbl().dbl(), j = h * i, v = p.X * i;
    field x3 = r.sqr() - j - v.dbl();
    return {x3, r * (v - x3) - (p.Y * j).dbl(), (p.Z + h).sqr() - z1z1 - hh};
  }
  friend ZK_HD jacobian_t operator-(const jacobian_t& p, const jacobian_t& q) { return p + (-q); }
  jacobian_t& operator+=(const jacobian_t& q) { return *this = *this + q; }
  jacobian_t& operator+=(const affine& q) { return *this = *this + q; }

  // Double-and-add by a canonical little-endian scalar of `limb_count` limbs.
  ZK_HD jacobian_t mul(const uint64_t* scalar, int limb_count) const {
    jacobian_t r = infinity();
    for (int i = limb_count - 1; i >= 0; --i)
      for (int b = 63; b >= 0; --b) {
        r = r.dbl();
        if ((scalar[i] >> b) & 1) r = r + *this;
      }
    return r;
  }
};

}  // namespace zk::ec
