// xyzz.hpp — extended Jacobian ("XYZZ") points on y^2 = x^3 + b: x = X/ZZ, y = Y/ZZZ with
// ZZ^3 = ZZZ^2; ZZ = 0 is the point at infinity. The MSM's bucket accumulator: adding an affine
// point costs 8 products and 2 squarings (madd-2008-s) against Jacobian's 7 and 4 (madd-2007-bl),
// with half the additions; adding two XYZZ points, 12 and 2 against 11 and 5 (add-2008-s,
// add-2007-bl). What the buckets and their reduction need: mixed and general addition and doubling
// (equal and opposite points handled), and conversion to Jacobian (Z = ZZZ, X = X ZZ^2,
// Y = Y ZZZ^2: 2M + 2S). Formulas from the Explicit-Formulas Database, a = 0 (madd-2008-s,
// add-2008-s, dbl-2008-s-1).
#pragma once
#include "kernels/ec/jacobian.hpp"

namespace zk::ec {

template <class Curve>
struct xyzz_t {
  using field = typename Curve::field;
  using affine = affine_t<Curve>;
  field X, Y, ZZ, ZZZ;

  static ZK_HD xyzz_t infinity() { return {field::one(), field::one(), field::zero(), field::zero()}; }
  static ZK_HD xyzz_t from_affine(const affine& a) {
    return a.is_infinity() ? infinity() : xyzz_t{a.x, a.y, field::one(), field::one()};
  }
  ZK_HD bool is_infinity() const { return ZZ.is_zero(); }

  ZK_HD jacobian_t<Curve> to_jacobian() const {
    if (is_infinity()) return jacobian_t<Curve>::infinity();
    return {X * ZZ.sqr(), Y * ZZZ.sqr(), ZZZ};
  }

  ZK_HD xyzz_t dbl() const { return is_infinity() ? *this : doubled<false>(X, Y, ZZ, ZZZ); }

  friend ZK_HD xyzz_t operator+(const xyzz_t& p, const affine& q) {
    if (q.is_infinity()) return p;
    if (p.is_infinity()) return from_affine(q);
    field u2 = q.x * p.ZZ, s2 = q.y * p.ZZZ;
    field h = u2 - p.X, r = s2 - p.Y;
    if (h.is_zero()) return r.is_zero() ? doubled<true>(q.x, q.y, p.ZZ, p.ZZZ) : infinity();
    field hh = h.sqr(), hhh = h * hh, v = p.X * hh;
    field x3 = r.sqr() - hhh - v.dbl();
    return {x3, field::mul_sub_mul(r, v - x3, p.Y, hhh), p.ZZ * hh, p.ZZZ * hhh};
  }
  ZK_HD xyzz_t& operator+=(const affine& q) { return *this = *this + q; }

  friend ZK_HD xyzz_t operator+(const xyzz_t& p, const xyzz_t& q) {
    if (p.is_infinity()) return q;
    if (q.is_infinity()) return p;
    field u1 = p.X * q.ZZ, u2 = q.X * p.ZZ, s1 = p.Y * q.ZZZ, s2 = q.Y * p.ZZZ;
    field h = u2 - u1, r = s2 - s1;
    if (h.is_zero()) return r.is_zero() ? p.dbl() : infinity();
    field hh = h.sqr(), hhh = h * hh, v = u1 * hh;
    field x3 = r.sqr() - hhh - v.dbl();
    return {x3, field::mul_sub_mul(r, v - x3, s1, hhh), p.ZZ * q.ZZ * hh, p.ZZZ * q.ZZZ * hhh};
  }
  ZK_HD xyzz_t& operator+=(const xyzz_t& q) { return *this = *this + q; }

 private:
  // 2(x, y, zz, zzz), a finite point; affine (zz = zzz = 1, unread) saves two products.
  template <bool affine_point>
  static ZK_HD xyzz_t doubled(const field& x, const field& y, const field& zz, const field& zzz) {
    field u = y.dbl(), v = u.sqr(), w = u * v, s = x * v;
    field x2 = x.sqr(), m = x2.dbl() + x2;
    field x3 = m.sqr() - s.dbl();
    field y3 = m * (s - x3) - w * y;
    if constexpr (affine_point) return {x3, y3, v, w};
    else return {x3, y3, v * zz, w * zzz};
  }
};

}  // namespace zk::ec
