// fp2.hpp — the quadratic extension Fp2 = Fp[u]/(u^2 + 1) of BLS12-381, host and device.
// An element is c0 + c1*u. xi = 1 + u is the non-residue that builds Fp6 and twists G2.
#pragma once
#include "kernels/ff/bls12-381.hpp"

namespace zk::bls12_381 {

struct Fp2 {
  Fp c0, c1;

  Fp2() = default;
  ZK_HD Fp2(const Fp& a0, const Fp& a1) : c0(a0), c1(a1) {}

  static ZK_HD Fp2 zero() { return {Fp::zero(), Fp::zero()}; }
  static ZK_HD Fp2 one() { return {Fp::one(), Fp::zero()}; }
  ZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  ZK_HD bool is_reduced() const { return c0.is_reduced() && c1.is_reduced(); }
  friend ZK_HD bool operator==(const Fp2& a, const Fp2& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
  friend ZK_HD bool operator!=(const Fp2& a, const Fp2& b) { return !(a == b); }

  friend ZK_HD Fp2 operator+(const Fp2& a, const Fp2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  friend ZK_HD Fp2 operator-(const Fp2& a, const Fp2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  ZK_HD Fp2 operator-() const { return {-c0, -c1}; }
  ZK_HD Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  // Karatsuba: three base-field products.
  friend ZK_HD Fp2 operator*(const Fp2& a, const Fp2& b) {
    Fp t0 = a.c0 * b.c0, t1 = a.c1 * b.c1;
    return {t0 - t1, (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1};
  }
  friend ZK_HD Fp2 operator*(const Fp2& a, const Fp& k) { return {a.c0 * k, a.c1 * k}; }
  ZK_HD Fp2 sqr() const {
    Fp t = c0 * c1;
    return {(c0 + c1) * (c0 - c1), t.dbl()};
  }
  Fp2& operator+=(const Fp2& b) { return *this = *this + b; }
  Fp2& operator-=(const Fp2& b) { return *this = *this - b; }
  Fp2& operator*=(const Fp2& b) { return *this = *this * b; }

  ZK_HD Fp2 conjugate() const { return {c0, -c1}; }
  // Multiplication by xi = 1 + u.
  ZK_HD Fp2 mul_by_xi() const { return {c0 - c1, c0 + c1}; }
  ZK_HD Fp2 inverse() const {
    Fp norm_inv = (c0.sqr() + c1.sqr()).inverse();
    return {c0 * norm_inv, -(c1 * norm_inv)};
  }
};

}  // namespace zk::bls12_381
