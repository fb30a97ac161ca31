// fp64_mont.hpp — Montgomery products on the GPU's FP64 pipe. An element of a prime field is L
// limbs of 52 bits, each held exactly in a double; each limb product is split exactly into its
// high and low 52 bits by two fused multiply-adds, so the products run on the FP64 pipe, which
// the integer products of mont_ptx.hpp leave idle (kernels/README.md), and only the column sums
// are integer additions. Written once for host and device; only the split differs (device: an
// FMA rounded toward zero, then an exact one; host: a 128-bit integer product), so the CPU
// tests check the device's algorithm limb for limb.
//
//   Element<P, L>    x R mod m in L doubles, limb i the integer bits [52 i, 52 i + 52) of it,
//                    R = 2^(52 L); P is a mont_t parameter set (modulus, inv);
//   encode / decode  an integer below m, P::N little-endian 64-bit words, to limbs and back
//                    (no Montgomery factor: callers convert between R = 2^(64 N) and this R);
//   mul(a, b)        a b R^-1 mod m, reduced (< m), for a, b < m.
#pragma once
#include <bit>
#include <cstdint>

#include "kernels/util/host_device.hpp"

namespace zk::ff::fp64 {

constexpr int limb_bits = 52;
constexpr uint64_t limb_mask = (uint64_t{1} << limb_bits) - 1;

template <class P, int L>
struct Element {
  double limb[L];
};

// Bits [52 i, 52 i + 52) of an integer of `words` 64-bit words given by word(w).
template <class Word>
ZK_HD_CONSTEXPR uint64_t bits_of(Word word, int words, int i) {
  const int bit = limb_bits * i, w = bit / 64, shift = bit % 64;
  uint64_t v = w < words ? word(w) >> shift : 0;
  if (shift > 64 - limb_bits && w + 1 < words) v |= word(w + 1) << (64 - shift);
  return v & limb_mask;
}

template <class P>
ZK_HD_CONSTEXPR uint64_t modulus_limb(int i) {
  return bits_of([](int w) { return P::modulus(w); }, P::N, i);
}

// The modulus's bit length, for the bound on R.
template <class P>
constexpr int modulus_bits() {
  return 64 * (P::N - 1) + (64 - std::countl_zero(P::modulus(P::N - 1)));
}

// An integer below 2^52 as a double (exact).
ZK_HD double to_double(uint64_t v) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(__longlong_as_double(0x4330000000000000ll | static_cast<long long>(v)), 0x1p52);
#else
  return static_cast<double>(v);
#endif
}

// The high and low 52 bits of the exact product of two limbs (integers below 2^52).
ZK_HD void split_product(double a, double b, uint64_t& high, uint64_t& low) {
#if defined(__CUDA_ARCH__)
  // 2^104 + a b rounded toward zero to a multiple of 2^52 (that binade's unit): 2^104 + k 2^52
  // with k = floor(a b / 2^52), the mantissa of the result. Then a b + (2^104 + 2^52) - that,
  // = 2^52 + (a b mod 2^52), is exact in the binade [2^52, 2^53), whose mantissa is a b mod 2^52.
  const double rounded = __fma_rz(a, b, 0x1p104);
  const double plus_low = __fma_rn(a, b, __dsub_rn(0x1p104 + 0x1p52, rounded));
  high = static_cast<uint64_t>(__double_as_longlong(rounded) - __double_as_longlong(0x1p104));
  low = static_cast<uint64_t>(__double_as_longlong(plus_low) - __double_as_longlong(0x1p52));
#else
  const unsigned __int128 product = static_cast<unsigned __int128>(static_cast<uint64_t>(a)) * static_cast<uint64_t>(b);
  high = static_cast<uint64_t>(product >> limb_bits);
  low = static_cast<uint64_t>(product) & limb_mask;
#endif
}

template <class P, int L>
ZK_HD Element<P, L> encode(const uint64_t* words) {
  Element<P, L> x;
  ZK_UNROLL for (int i = 0; i < L; ++i) x.limb[i] = to_double(bits_of([&](int w) { return words[w]; }, P::N, i));
  return x;
}

template <class P, int L>
ZK_HD void decode(const Element<P, L>& x, uint64_t* words) {
  ZK_UNROLL for (int w = 0; w < P::N; ++w) words[w] = 0;
  ZK_UNROLL for (int i = 0; i < L; ++i) {
    const uint64_t limb = static_cast<uint64_t>(x.limb[i]);
    const int bit = limb_bits * i, w = bit / 64, shift = bit % 64;
    if (w < P::N) words[w] |= limb << shift;
    if (shift > 64 - limb_bits && w + 1 < P::N) words[w + 1] |= limb >> (64 - shift);
  }
}

// a b R^-1 mod m. The 2L + 1 columns collect the 52-bit halves of the limb products (each
// column below 4L 2^52 + its carry, far from 2^64); then, word by word, q = column_i m' mod 2^52
// makes column i a multiple of 2^52 once q m is added, and its carry moves up. The columns L to
// 2L - 1, carried, are (a b + Q m) / R < 2m, less m where that is at least m.
template <class P, int L>
ZK_HD Element<P, L> mul(const Element<P, L>& a, const Element<P, L>& b) {
  static_assert(limb_bits * L >= modulus_bits<P>() + 2, "R = 2^(52 L) must exceed 4m");
  uint64_t column[2 * L + 1];
  ZK_UNROLL for (int k = 0; k <= 2 * L; ++k) column[k] = 0;
  auto add_product = [&](double x, double y, int k) {
    uint64_t high, low;
    split_product(x, y, high, low);
    column[k] += low;
    column[k + 1] += high;
  };
  ZK_UNROLL for (int i = 0; i < L; ++i)
    ZK_UNROLL for (int j = 0; j < L; ++j) add_product(a.limb[i], b.limb[j], i + j);
  constexpr uint64_t minus_inverse = P::inv() & limb_mask;  // -m^-1 mod 2^52
  ZK_UNROLL for (int i = 0; i < L; ++i) {
    const double q = to_double(((column[i] & limb_mask) * minus_inverse) & limb_mask);
    ZK_UNROLL for (int j = 0; j < L; ++j) add_product(q, static_cast<double>(modulus_limb<P>(j)), i + j);
    column[i + 1] += column[i] >> limb_bits;
  }
  uint64_t sum[L], difference[L], borrow = 0;
  ZK_UNROLL for (int k = 0; k < L; ++k) {
    sum[k] = column[L + k] & limb_mask;
    column[L + k + 1] += column[L + k] >> limb_bits;
    const uint64_t d = sum[k] - modulus_limb<P>(k) - borrow;
    difference[k] = d & limb_mask;
    borrow = d >> 63;
  }
  Element<P, L> r;
  ZK_UNROLL for (int k = 0; k < L; ++k) r.limb[k] = to_double(borrow ? sum[k] : difference[k]);
  return r;
}

}  // namespace zk::ff::fp64
