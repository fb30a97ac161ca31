// mont.hpp — a prime field in Montgomery form, written once for host and device.
//
// mont_t<P> holds an element x as x*R mod m in P::N little-endian 64-bit limbs (R = 2^(64N)).
// P supplies the modulus m, R^2 mod m, R mod m and inv = -m^-1 mod 2^64 as ZK_HD constexpr
// functions of the limb index, so nvcc folds them into immediates inside unrolled loops.
// Requirement on m: its top limb is below 2^63 - 1 (a spare bit), true for both BLS12-381
// fields; then every result stays below m after one conditional subtraction.
// Elements are trivially copyable PODs (cudaMemcpy-able); all operations are pure.
#pragma once
#include <cstdint>

#include "kernels/ff/limbs.hpp"
#include "kernels/ff/power.hpp"

#if !defined(__CUDA_ARCH__) && defined(__x86_64__) && defined(__BMI2__) && defined(__ADX__)
#define ZK_X86_ADX 1
#include "kernels/ff/mont_mul_x86.hpp"
#endif
#include "kernels/ff/mont_ptx.hpp"

// Addition and subtraction are a few instructions on x86 (mont_mul_x86.hpp): always inline them
// there, where g++ otherwise leaves them out of line (a call, and the result through memory).
#if defined(ZK_X86_ADX) && !defined(__CUDACC__)
#define ZK_FIELD_ADD __attribute__((always_inline)) inline
#else
#define ZK_FIELD_ADD ZK_HD
#endif

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

  // True when `limbs` (N little-endian words) hold a value below the modulus: the check for
  // elements loaded raw from files.
  static ZK_HD bool is_below_modulus(const uint64_t* limbs) {
    for (int i = N - 1; i >= 0; --i)
      if (limbs[i] != P::modulus(i)) return limbs[i] < P::modulus(i);
    return false;
  }
  ZK_HD bool is_reduced() const { return is_below_modulus(l); }

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

  friend ZK_FIELD_ADD mont_t operator+(const mont_t& a, const mont_t& b) {
#if defined(__CUDA_ARCH__)
    mont_t s;
    ptx::add_mod<P>(a.l, b.l, s.l);
    return s;
#else
#if defined(ZK_X86_ADX)
    if constexpr (N == 4 || N == 6) {
      mont_t s;
      if constexpr (N == 4) mont_add_x86_4(s.l, a.l, b.l, zero_then_modulus);
      else mont_add_x86_6(s.l, a.l, b.l, zero_then_modulus);
      return s;
    }
#endif
    mont_t s;
    uint64_t carry = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) s.l[i] = adc(a.l[i], b.l[i], carry);
    return s.reduced_once();
#endif
  }
  friend ZK_FIELD_ADD mont_t operator-(const mont_t& a, const mont_t& b) {
#if defined(__CUDA_ARCH__)
    mont_t d;
    ptx::sub_mod<P>(a.l, b.l, d.l);
    return d;
#else
#if defined(ZK_X86_ADX)
    if constexpr (N == 4 || N == 6) {
      mont_t d;
      if constexpr (N == 4) mont_sub_x86_4(d.l, a.l, b.l, zero_then_modulus);
      else mont_sub_x86_6(d.l, a.l, b.l, zero_then_modulus);
      return d;
    }
#endif
    mont_t d;
    uint64_t borrow = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) d.l[i] = sbb(a.l[i], b.l[i], borrow);
    // On borrow add m back; the mask keeps this branch-free.
    uint64_t mask = 0 - borrow, carry = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) d.l[i] = adc(d.l[i], P::modulus(i) & mask, carry);
    return d;
#endif
  }
  ZK_HD mont_t operator-() const { return zero() - *this; }
  ZK_HD mont_t dbl() const { return *this + *this; }
  mont_t& operator+=(const mont_t& b) { return *this = *this + b; }
  mont_t& operator-=(const mont_t& b) { return *this = *this - b; }
  mont_t& operator*=(const mont_t& b) { return *this = *this * b; }

  // Montgomery product a*b*R^-1 mod m by CIOS in its "no-carry" form (gnark-crypto's): since the
  // top limb of m leaves a spare bit, the running value fits N limbs and the two carry chains
  // (product A, reduction C) need no extra words. 2.5x faster than textbook CIOS on g++ 12.
  friend ZK_HD mont_t operator*(const mont_t& a, const mont_t& b) {
#if defined(__CUDA_ARCH__)
    // The GPU's own path (mont_ptx.hpp); Fp's product is large, so one out-of-line copy keeps
    // the curve kernels compact (compile time, instruction cache).
    if constexpr (N > 4) return device_product_out_of_line(a, b);
    else return device_product(a, b);
#else
#if defined(ZK_X86_ADX)
    if constexpr (N == 4 || N == 6) {
      mont_t r;
      if constexpr (N == 4) mont_mul_x86_4(r.l, a.l, b.l, zero_then_modulus + N, P::inv());
      else mont_mul_x86_6(r.l, a.l, b.l, zero_then_modulus + N, P::inv());
      return r;
    }
#endif
    uint64_t t[N];
    ZK_UNROLL for (int i = 0; i < N; ++i) t[i] = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) {
      uint64_t carry_a = 0, carry_c = 0;
      t[0] = mac(a.l[0], b.l[i], t[0], carry_a);
      uint64_t m = t[0] * P::inv();
      mac(m, P::modulus(0), t[0], carry_c);
      ZK_UNROLL for (int j = 1; j < N; ++j) {
        t[j] = mac(a.l[j], b.l[i], t[j], carry_a);
        t[j - 1] = mac(m, P::modulus(j), t[j], carry_c);
      }
      t[N - 1] = carry_c + carry_a;
    }
    mont_t r;
    ZK_UNROLL for (int i = 0; i < N; ++i) r.l[i] = t[i];
    return r.reduced_once();
#endif
  }
  ZK_HD mont_t sqr() const {
#if defined(__CUDA_ARCH__)
    if constexpr (N > 4) return device_square_out_of_line(*this);
    else return device_square(*this);
#else
    return *this * *this;
#endif
  }
  // a * b - c * d; on the GPU with one Montgomery reduction where a * b - c * d takes two.
  static ZK_HD mont_t mul_sub_mul(const mont_t& a, const mont_t& b, const mont_t& c, const mont_t& d) {
#if defined(__CUDA_ARCH__)
    return device_mul_sub_mul(a, b, c, d);
#else
    return a * b - c * d;
#endif
  }

#if defined(ZK_X86_ADX)
  // N zero limbs then the modulus: the x86 kernels (and Fp2's lazy
  // product) add or subtract one row or the other.
  static constexpr uint64_t zero_then_modulus_limb(int i) { return i >= N && i < 2 * N ? P::modulus(i - N) : 0; }
  static constexpr uint64_t zero_then_modulus[12] = {
      zero_then_modulus_limb(0), zero_then_modulus_limb(1), zero_then_modulus_limb(2),
      zero_then_modulus_limb(3), zero_then_modulus_limb(4), zero_then_modulus_limb(5),
      zero_then_modulus_limb(6), zero_then_modulus_limb(7), zero_then_modulus_limb(8),
      zero_then_modulus_limb(9), zero_then_modulus_limb(10), zero_then_modulus_limb(11)};
#endif

  // this^e for an exponent of `limb_count` little-endian limbs (canonical integer).
  ZK_HD mont_t pow(const uint64_t* e, int limb_count) const { return power(*this, e, limb_count); }
  ZK_HD mont_t pow_u64(uint64_t e) const { return pow(&e, 1); }
  // Multiplicative inverse by Fermat (this^(m-2)); the inverse of zero is zero.
  ZK_HD mont_t inverse() const {
    uint64_t e[N];
    uint64_t borrow = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) e[i] = sbb(P::modulus(i), i == 0 ? 2 : 0, borrow);
    return pow(e, N);
  }

 private:
  // Subtracts m when the value is >= m (inputs are < 2m). Branch-free: the outcome is random,
  // and a mispredicted branch here cost more than the whole subtraction.
  ZK_HD mont_t reduced_once() const {
    mont_t d;
    uint64_t borrow = 0;
    ZK_UNROLL for (int i = 0; i < N; ++i) d.l[i] = sbb(l[i], P::modulus(i), borrow);
    uint64_t keep = 0 - borrow;  // all ones when this < m
    ZK_UNROLL for (int i = 0; i < N; ++i) d.l[i] = (l[i] & keep) | (d.l[i] & ~keep);
    return d;
  }
#if defined(__CUDA_ARCH__)
  static __device__ __forceinline__ mont_t device_product(const mont_t& a, const mont_t& b) {
    mont_t r;
    ptx::mont_mul<P>(a.l, b.l, r.l);
    ptx::reduce_once<P>(r.l);
    return r;
  }
  static __device__ __noinline__ mont_t device_product_out_of_line(mont_t a, mont_t b) { return device_product(a, b); }
  static __device__ __forceinline__ mont_t device_square(const mont_t& a) {
    mont_t r;
    ptx::mont_sqr<P>(a.l, r.l);
    ptx::reduce_once<P>(r.l);
    return r;
  }
  static __device__ __noinline__ mont_t device_square_out_of_line(mont_t a) { return device_square(a); }
  static __device__ __noinline__ mont_t device_mul_sub_mul(mont_t a, mont_t b, mont_t c, mont_t d) {
    mont_t r;
    ptx::mont_mul_sub_mul<P>(a.l, b.l, c.l, d.l, r.l);
    ptx::reduce_once<P>(r.l);
    return r;
  }
#endif
};

}  // namespace zk::ff
