// mont.hpp — a prime field in Montgomery form, written once for host and device.
//
// mont_t<P> holds an element x as x*R mod m in P::N little-endian 64-bit limbs (R = 2^(64N)).
// P supplies the modulus m, R^2 mod m, R mod m and inv = -m^-1 mod 2^64 as ZK_HD constexpr
// functions of the limb index, so nvcc folds them into immediates inside unrolled loops.
// Requirement on m: its top limb leaves a spare bit (m < 2^(64N-1)), true for both BLS12-381
// fields; then every result stays below m after one conditional subtraction.
// Elements are trivially copyable PODs (cudaMemcpy-able); all operations are pure.
#pragma once
#include <cstdint>

#include "kernels/ff/limbs.hpp"

namespace zk::ff {

template <class P>
struct mont_t {
  static constexpr int N = P::N;
  using params = P;
  uint64_t l[N];

  mont_t() = default;

  static ZK_HD mont_t zero() {
    mont_t r;
    ZK_UNROLL for (int i = 0; i < N; ++i) r.l[i] = 0;
    return r;
  }
  static ZK_HD mont_t one() {
    mont_t r;
    ZK_UNROLL for (int i = 0; i < N; ++i) r.l[i] = P::one(i);
    return r;
  }
  // x must be canonical (< m); multiplies by R^2 to enter Montgomery form.
  static ZK_HD mont_t from_canonical(const uint64_t* x) {
    mont_t a, r2;
    ZK_UNROLL for (int i = 0; i < N; ++i) {
      a.l[i] = x[i];
      r2.l[i] = P::r2(i);
    }
    return a * r2;
  }
  static ZK_HD mont_t from_u64(uint64_t v) {
    uint64_t x[N];
    ZK_UNROLL for (int i = 0; i < N; ++i) x[i] = 0;
    x[0] = v;
    return from_canonical(x);
  }
  // Writes the canonical value (< m) of this element.
  ZK_HD void to_canonical(uint64_t* out) const {
    mont_t unit = zero();
    unit.l[0] = 1;
    mont_t c = *this * unit;
    ZK_UNROLL for (int i = 0; i < N; ++i) out[i] = c.l[i];
  }

  ZK_HD bool is_zero() const {
    uint64_t acc = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) acc |= l[i];
    return acc == 0;
  }
  ZK_HD bool is_one() const { return *this == one(); }
  friend ZK_HD bool operator==(const mont_t& a, const mont_t& b) {
    uint64_t acc = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) acc |= a.l[i] ^ b.l[i];
    return acc == 0;
  }
  friend ZK_HD bool operator!=(const mont_t& a, const mont_t& b) { return !(a == b); }

  friend ZK_HD mont_t operator+(const mont_t& a, const mont_t& b) {
    mont_t s;
    uint64_t carry = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) s.l[i] = adc(a.l[i], b.l[i], carry);
    return s.reduced_once();
  }
  friend ZK_HD mont_t operator-(const mont_t& a, const mont_t& b) {
    mont_t d;
    uint64_t borrow = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) d.l[i] = sbb(a.l[i], b.l[i], borrow);
    // On borrow add m back; the mask keeps this branch-free.
    uint64_t mask = 0 - borrow, carry = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) d.l[i] = adc(d.l[i], P::modulus(i) & mask, carry);
    return d;
  }
  ZK_HD mont_t operator-() const { return zero() - *this; }
  ZK_HD mont_t dbl() const { return *this + *this; }
  mont_t& operator+=(const mont_t& b) { return *this = *this + b; }
  mont_t& operator-=(const mont_t& b) { return *this = *this - b; }
  mont_t& operator*=(const mont_t& b) { return *this = *this * b; }

  // Coarsely integrated operand scanning (CIOS) Montgomery product: a*b*R^-1 mod m.
  friend ZK_HD mont_t operator*(const mont_t& a, const mont_t& b) {
    uint64_t t[N + 2];
    ZK_UNROLL for (int i = 0; i < N + 2; ++i) t[i] = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) {
      uint64_t carry = 0;
      ZK_UNROLL for (int j = 0; j < N; ++j) t[j] = mac(a.l[j], b.l[i], t[j], carry);
      uint64_t c2 = 0;
      t[N] = adc(t[N], carry, c2);
      t[N + 1] = c2;
      uint64_t m = t[0] * P::inv();
      carry = 0;
      mac(m, P::modulus(0), t[0], carry);
      ZK_UNROLL for (int j = 1; j < N; ++j) t[j - 1] = mac(m, P::modulus(j), t[j], carry);
      c2 = 0;
      t[N - 1] = adc(t[N], carry, c2);
      t[N] = t[N + 1] + c2;
    }
    mont_t r;
    ZK_UNROLL for (int i = 0; i < N; ++i) r.l[i] = t[i];
    return r.reduced_once();
  }
  ZK_HD mont_t sqr() const { return *this * *this; }

  // this^e for an exponent of `limb_count` little-endian limbs (canonical integer).
  ZK_HD mont_t pow(const uint64_t* e, int limb_count) const {
    mont_t r = one();
    for (int i = limb_count - 1; i >= 0; --i)
      for (int b = 63; b >= 0; --b) {
        r = r.sqr();
        if ((e[i] >> b) & 1) r = r * *this;
      }
    return r;
  }
  ZK_HD mont_t pow_u64(uint64_t e) const { return pow(&e, 1); }
  // Multiplicative inverse by Fermat (this^(m-2)); the inverse of zero is zero.
  ZK_HD mont_t inverse() const {
    uint64_t e[N];
    uint64_t borrow = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) e[i] = sbb(P::modulus(i), i == 0 ? 2 : 0, borrow);
    return pow(e, N);
  }

 private:
  // Subtracts m when the value is >= m (inputs are < 2m).
  ZK_HD mont_t reduced_once() const {
    mont_t d;
    uint64_t borrow = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) d.l[i] = sbb(l[i], P::modulus(i), borrow);
    return borrow ? *this : d;
  }
};

}  // namespace zk::ff
