// fp12.hpp — the tower Fp6 = Fp2[v]/(v^3 - xi), Fp12 = Fp6[w]/(w^2 - v), xi = 1 + u, where the
// pairing takes its values. The same tower as ffjavascript/snarkjs and noble, so an Fp12 printed
// as [[c0.c0,c0.c1,c0.c2],[c1.c0,c1.c1,c1.c2]] matches snarkjs's vk_alphabeta_12 coefficient for
// coefficient. Host and device, though only the host's pairing uses it today.
#pragma once
#include "kernels/ff/fp2.hpp"

namespace zk::bls12_381 {

struct Fp6 {
  Fp2 c0, c1, c2;

  static ZK_HD Fp6 zero() { return {Fp2::zero(), Fp2::zero(), Fp2::zero()}; }
  static ZK_HD Fp6 one() { return {Fp2::one(), Fp2::zero(), Fp2::zero()}; }
  ZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  friend ZK_HD bool operator==(const Fp6& a, const Fp6& b) {
    return a.c0 == b.c0 && a.c1 == b.c1 && a.c2 == b.c2;
  }
  friend ZK_HD Fp6 operator+(const Fp6& a, const Fp6& b) {
    return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2};
  }
  friend ZK_HD Fp6 operator-(const Fp6& a, const Fp6& b) {
    return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2};
  }
  ZK_HD Fp6 operator-() const { return {-c0, -c1, -c2}; }
  // Karatsuba-style product: six Fp2 products.
  friend ZK_HD Fp6 operator*(const Fp6& a, const Fp6& b) {
    Fp2 t0 = a.c0 * b.c0, t1 = a.c1 * b.c1, t2 = a.c2 * b.c2;
    return {((a.c1 + a.c2) * (b.c1 + b.c2) - t1 - t2).mul_by_xi() + t0,
            (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1 + t2.mul_by_xi(),
            (a.c0 + a.c2) * (b.c0 + b.c2) - t0 - t2 + t1};
  }
  // Multiplication by v: (c0 + c1 v + c2 v^2) v = xi c2 + c0 v + c1 v^2.
  ZK_HD Fp6 mul_by_v() const { return {c2.mul_by_xi(), c0, c1}; }
  ZK_HD Fp6 inverse() const {
    Fp2 a = c0.sqr() - (c1 * c2).mul_by_xi();
    Fp2 b = c2.sqr().mul_by_xi() - c0 * c1;
    Fp2 c = c1.sqr() - c0 * c2;
    Fp2 f_inv = (c0 * a + (c2 * b + c1 * c).mul_by_xi()).inverse();
    return {a * f_inv, b * f_inv, c * f_inv};
  }
};

struct Fp12 {
  Fp6 c0, c1;

  static ZK_HD Fp12 one() { return {Fp6::one(), Fp6::zero()}; }
  ZK_HD bool is_one() const { return *this == one(); }
  friend ZK_HD bool operator==(const Fp12& a, const Fp12& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
  friend ZK_HD bool operator!=(const Fp12& a, const Fp12& b) { return !(a == b); }
  friend ZK_HD Fp12 operator*(const Fp12& a, const Fp12& b) {
    Fp6 t0 = a.c0 * b.c0, t1 = a.c1 * b.c1;
    return {t0 + t1.mul_by_v(), (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1};
  }
  Fp12& operator*=(const Fp12& b) { return *this = *this * b; }
  ZK_HD Fp12 sqr() const { return *this * *this; }
  // The p^6-power Frobenius: the inverse of any element of norm one.
  ZK_HD Fp12 conjugate() const { return {c0, -c1}; }
  ZK_HD Fp12 inverse() const {
    Fp6 norm_inv = (c0 * c0 - (c1 * c1).mul_by_v()).inverse();
    return {c0 * norm_inv, -(c1 * norm_inv)};
  }
  // this^e for a canonical exponent of `limb_count` little-endian limbs.
  ZK_HD Fp12 pow(const uint64_t* e, int limb_count) const { return ff::power(*this, e, limb_count); }
};

}  // namespace zk::bls12_381
