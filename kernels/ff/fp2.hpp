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
  // Karatsuba: three base-field products (on the GPU and on x86 BMI2/ADX double-width ones,
  // reduced once per coefficient: device_mul_lazy, mul_lazy).
  friend ZK_HD Fp2 operator*(const Fp2& a, const Fp2& b) {
#if defined(__CUDA_ARCH__)
    return device_mul_lazy(a, b);
#elif defined(ZK_X86_ADX) && !defined(__CUDACC__)
    return mul_lazy(a, b);
#else
    Fp t0 = a.c0 * b.c0, t1 = a.c1 * b.c1;
    return {t0 - t1, (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1};
#endif
  }
  friend ZK_HD Fp2 operator*(const Fp2& a, const Fp& k) { return {a.c0 * k, a.c1 * k}; }
  // a * b - c * d, as written: the curves' formulas name it for Fp, where it saves a reduction on
  // the GPU; Fp2's version with one reduction a coefficient is slower there (kernels/README.md).
  static ZK_HD Fp2 mul_sub_mul(const Fp2& a, const Fp2& b, const Fp2& c, const Fp2& d) { return a * b - c * d; }
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

#if defined(ZK_X86_ADX) && !defined(__CUDACC__)
 private:
  // c0 = a0 b0 - a1 b1 and c1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1 on double-width products (p
  // added above 2^384 when c0 is negative), each then below p * 2^384 and reduced once: two
  // Montgomery reductions instead of three.
  static Fp2 mul_lazy(const Fp2& a, const Fp2& b) {
    auto add = [](uint64_t* out, const uint64_t* x, const uint64_t* y) {  // 6 limbs, no reduction
      uint64_t carry = 0;
      ZK_UNROLL for (int i = 0; i < 6; ++i) out[i] = ff::adc(x[i], y[i], carry);
    };
    auto sub_wide = [](uint64_t* out, const uint64_t* x, const uint64_t* y) {  // returns the borrow
      uint64_t borrow = 0;
      ZK_UNROLL for (int i = 0; i < 12; ++i) out[i] = ff::sbb(x[i], y[i], borrow);
      return borrow;
    };
    const uint64_t* table = Fp::zero_then_modulus;
    uint64_t sa[6], sb[6], t0[12], t1[12], t2[12];
    add(sa, a.c0.l, a.c1.l);  // below 2p < 2^382
    add(sb, b.c0.l, b.c1.l);
    ff::mul_wide_x86_6(t0, a.c0.l, b.c0.l);
    ff::mul_wide_x86_6(t1, a.c1.l, b.c1.l);
    ff::mul_wide_x86_6(t2, sa, sb);
    sub_wide(t2, t2, t0);
    sub_wide(t2, t2, t1);  // a0 b1 + a1 b0 < 2p^2
    uint64_t negative = sub_wide(t0, t0, t1);
    add(t0 + 6, t0 + 6, table + 6 * negative);
    Fp2 r;
    ff::redc_x86_6(r.c0.l, t0, table + 6, FpParams::inv());
    ff::redc_x86_6(r.c1.l, t2, table + 6, FpParams::inv());
    return r;
  }
#endif

#if defined(__CUDA_ARCH__)
 private:
  // mul_lazy on the GPU's 32-bit words (mont_ptx.hpp), out of line as Fp's product is. Bounds,
  // from p < 2^381: a0 + a1 < 2p < 2^382 fits 12 words; t0, t1 < p^2 and (a0 + a1)(b0 + b1) < 4p^2
  // < 2^764 fit 24; t0 + t1 < 2p^2 < 2^763; what redc_wide takes, below p 2^384: t0 - t1, plus
  // p 2^384 where negative (sub_wide_mod), and (a0 + a1)(b0 + b1) - t0 - t1 = a0 b1 + a1 b0
  // < 2p^2 < p 2^382. Each result < 2p, then reduced once: < p, as Fp's product returns it.
  static __device__ __noinline__ Fp2 device_mul_lazy(Fp2 a, Fp2 b) {
    constexpr int n = 2 * Fp::N;
    uint32_t a0[n], a1[n], b0[n], b1[n], sum_a[n], sum_b[n], t0[2 * n], t1[2 * n], t0_plus_t1[2 * n];
    ff::ptx::to_words<Fp::N>(a.c0.l, a0);
    ff::ptx::to_words<Fp::N>(a.c1.l, a1);
    ff::ptx::to_words<Fp::N>(b.c0.l, b0);
    ff::ptx::to_words<Fp::N>(b.c1.l, b1);
    ff::ptx::mul_wide<n>(a0, b0, t0);
    ff::ptx::add_words<n>(sum_a, a0, a1);
    ff::ptx::add_words<n>(sum_b, b0, b1);
    ff::ptx::mul_wide<n>(a1, b1, t1);
    ff::ptx::add_words<2 * n>(t0_plus_t1, t0, t1);
    ff::ptx::sub_wide_mod<FpParams>(t0, t0, t1);
    Fp2 r;
    ff::ptx::redc_wide<FpParams>(t0, r.c0.l);
    ff::ptx::reduce_once<FpParams>(r.c0.l);
    ff::ptx::mul_wide<n>(sum_a, sum_b, t1);
    ff::ptx::sub_words<2 * n>(t1, t1, t0_plus_t1);
    ff::ptx::redc_wide<FpParams>(t1, r.c1.l);
    ff::ptx::reduce_once<FpParams>(r.c1.l);
    return r;
  }
#endif
};

}  // namespace zk::bls12_381
