// mont_ptx.hpp — the device path of mont_t's arithmetic over 32-bit words with the PTX carry
// chains, which the GPU executes natively, instead of 64-bit limbs whose products and carries it
// must emulate with compares. Same representation (64-bit limbs read as pairs of 32-bit words,
// R = 2^(64N)), same results, checked against the host path by the GPU tests.
//   mont_mul            CIOS with the running value split over two word arrays (even and odd
//                       words of a), see below; the result is < 2m, not yet reduced;
//   mul_wide            a * b in twice the words (schoolbook over the same two arrays);
//   redc_wide           T * 2^(-64 N) mod m for a double-width T < m 2^(64 N): the result is
//                       < 2m, not yet reduced (a product reduced later, as Fp2's lazy one does);
//   sub_wide_mod        a - b of double-width values, plus m 2^(64 N) where it borrowed;
//   mont_mul_sub_mul    a b - c d reduced once (two double-width products, one redc_wide);
//   sqr_wide, mont_sqr  a^2 with each cross product a_i a_j once, doubled (then redc_wide);
//   add_mod / sub_mod   one add.cc (sub.cc) chain, then one conditional correction;
//   reduce_once         x - m when x >= m, for x < 2m: one sub.cc chain and a select per word.
// Consecutive volatile asm statements carry the CC flag between them: each chain is written as
// one unbroken run of them (without volatile the compiler may reorder them: measured wrong on
// every product). Device code only.
#pragma once
#include <cstdint>

#if defined(__CUDA_ARCH__)
namespace zk::ff::ptx {

// 32-bit words of N 64-bit limbs, and back.
template <int N>
__device__ __forceinline__ void to_words(const uint64_t* limbs, uint32_t (&w)[2 * N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) w[2 * i] = static_cast<uint32_t>(limbs[i]), w[2 * i + 1] = static_cast<uint32_t>(limbs[i] >> 32);
}
template <int N>
__device__ __forceinline__ void from_words(const uint32_t (&w)[2 * N], uint64_t* limbs) {
#pragma unroll
  for (int i = 0; i < N; ++i) limbs[i] = (uint64_t{w[2 * i + 1]} << 32) | w[2 * i];
}
template <class P>
__device__ __forceinline__ void modulus_words(uint32_t (&m)[2 * P::N]) {
#pragma unroll
  for (int i = 0; i < P::N; ++i) m[2 * i] = static_cast<uint32_t>(P::modulus(i)), m[2 * i + 1] = static_cast<uint32_t>(P::modulus(i) >> 32);
}

// The product keeps its running value T in two arrays of 32-bit words, so that the low and high
// halves of every a_j * b_i land on an aligned register pair (the GPU fuses them into one wide
// multiply-add, IMAD.WIDE, whose accumulator is such a pair; one array with the odd words'
// pairs straddling it cost ptxas a move per word, 119 moves per Fr product):
//   T = sum_j even[j] 2^(32 j) + sum_j odd[j] 2^(32 (j + 1)).
// even collects a's even words times b_i, odd a's odd words. After each word of b the reduction
// makes even[0] zero and T shifts down one word: odd becomes the even-aligned array and even,
// two words down, the odd one (the shift is folded into the next row's multiply-adds, which read
// one register and write another), with even[1] added into the new even[0].

// acc[j], acc[j+1] = a[j] * b (low, high) for even j < n, with a read at stride 2.
template <int n>
__device__ __forceinline__ void mul_words(uint32_t* acc, const uint32_t* a, uint32_t b) {
#pragma unroll
  for (int j = 0; j < n; j += 2)
    asm("mul.lo.u32 %0, %2, %3; mul.hi.u32 %1, %2, %3;" : "=r"(acc[j]), "=r"(acc[j + 1]) : "r"(a[j]), "r"(b));
}

// acc[j], acc[j+1] += a[j] * b for even j < n, one carry chain (started here, or continuing the
// one in CC where carry_in; left in CC).
template <int n, bool carry_in = false>
__device__ __forceinline__ void mad_words(uint32_t* acc, const uint32_t* a, uint32_t b) {
  if constexpr (carry_in)
    asm volatile("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                 : "+r"(acc[0]), "+r"(acc[1]) : "r"(a[0]), "r"(b));
  else
    asm volatile("mad.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                 : "+r"(acc[0]), "+r"(acc[1]) : "r"(a[0]), "r"(b));
#pragma unroll
  for (int j = 2; j < n; j += 2)
    asm volatile("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                 : "+r"(acc[j]), "+r"(acc[j + 1]) : "r"(a[j]), "r"(b));
}

// odd[j], odd[j+1] = a[j] * b + odd[j+2], odd[j+3] (the array shifted down two words), taking
// the carry in CC and ending the chain.
template <int n>
__device__ __forceinline__ void mad_words_shifted(uint32_t* odd, const uint32_t* a, uint32_t b) {
#pragma unroll
  for (int j = 0; j < n - 2; j += 2)
    asm volatile("madc.lo.cc.u32 %0, %2, %3, %4; madc.hi.cc.u32 %1, %2, %3, %5;"
                 : "=r"(odd[j]), "=r"(odd[j + 1]) : "r"(a[j]), "r"(b), "r"(odd[j + 2]), "r"(odd[j + 3]));
  asm volatile("madc.lo.cc.u32 %0, %2, %3, 0; madc.hi.u32 %1, %2, %3, 0;"
               : "=r"(odd[n - 2]), "=r"(odd[n - 1]) : "r"(a[n - 2]), "r"(b));
}

// s = a + b over n words, one add chain; the carry out is dropped (callers' bounds keep it zero,
// or they want the sum mod 2^(32 n)).
template <int n>
__device__ __forceinline__ void add_words(uint32_t* s, const uint32_t* a, const uint32_t* b) {
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(s[0]) : "r"(a[0]), "r"(b[0]));
#pragma unroll
  for (int j = 1; j < n - 1; ++j) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(s[j]) : "r"(a[j]), "r"(b[j]));
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(s[n - 1]) : "r"(a[n - 1]), "r"(b[n - 1]));
}

// acc += a for acc of k words and a of k - 1: one add chain, its last carry into acc's top word.
template <int k>
__device__ __forceinline__ void add_below_top(uint32_t* acc, const uint32_t* a) {
  asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(acc[0]) : "r"(a[0]));
#pragma unroll
  for (int j = 1; j < k - 1; ++j) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(acc[j]) : "r"(a[j]));
  asm volatile("addc.u32 %0, %0, 0;" : "+r"(acc[k - 1]));
}

// How a row's q m meets the odd array: added to it (a new chain), written into it (the first
// row of a reduction), or added to it shifted down two words (continuing the chain in CC).
enum class OddWords { add, write, add_shifted };

// Moduli whose lowest word is 1 (BLS12-381's r = 1 mod 2^32: its 2-adicity is 32): q m's lowest
// word product is q itself, an addition off the multiplier.
template <class P>
constexpr bool kLowestWordOne = static_cast<uint32_t>(P::modulus(0)) == 1;

// T += q m: m's odd words into `odd` (in the given form), its even words into `even` (a new
// chain whose carry goes into odd's top word).
template <class P, OddWords form>
__device__ __forceinline__ void add_q_times_modulus(uint32_t* even, uint32_t* odd, const uint32_t* m, uint32_t q) {
  constexpr int n = 2 * P::N;
  if constexpr (form == OddWords::add) mad_words<n>(odd, m + 1, q);
  else if constexpr (form == OddWords::write) mul_words<n>(odd, m + 1, q);
  else mad_words_shifted<n>(odd, m + 1, q);
  if constexpr (kLowestWordOne<P>) {
    asm volatile("add.cc.u32 %0, %0, %2; addc.cc.u32 %1, %1, 0;" : "+r"(even[0]), "+r"(even[1]) : "r"(q));
    mad_words<n - 2, true>(even + 2, m + 2, q);
  } else {
    mad_words<n>(even, m, q);
  }
  asm volatile("addc.u32 %0, %0, 0;" : "+r"(odd[n - 1]));
}

// One word of b: T = (T + a * b) shifted as described above (unless first), then T += q * m
// with q making even[0] zero.
template <class P>
__device__ __forceinline__ void mad_row_reduce(uint32_t* even, uint32_t* odd, const uint32_t* a, uint32_t b,
                                               const uint32_t* m, bool first) {
  constexpr int n = 2 * P::N;
  if (first) {
    mul_words<n>(odd, a + 1, b);
    mul_words<n>(even, a, b);
  } else {
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(even[0]) : "r"(odd[1]));
    mad_words_shifted<n>(odd, a + 1, b);
    mad_words<n>(even, a, b);
    asm volatile("addc.u32 %0, %0, 0;" : "+r"(odd[n - 1]));
  }
  const uint32_t q = even[0] * static_cast<uint32_t>(P::inv());  // inv = -m^-1 mod 2^32
  add_q_times_modulus<P, OddWords::add>(even, odd, m, q);
}

// out = a * b * 2^(-64 N) mod m, not yet reduced: out < 2m. N 64-bit limbs each. Needs the
// modulus's spare top bit (T stays within the words without a carry word).
template <class P>
__device__ __forceinline__ void mont_mul(const uint64_t* a, const uint64_t* b, uint64_t* out) {
  constexpr int n = 2 * P::N;
  uint32_t x[n], y[n], m[n], even[n], odd[n];
  to_words<P::N>(a, x);
  to_words<P::N>(b, y);
  modulus_words<P>(m);
#pragma unroll
  for (int i = 0; i < n; i += 2) {
    mad_row_reduce<P>(even, odd, x, y[i], m, i == 0);
    mad_row_reduce<P>(odd, even, x, y[i + 1], m, false);
  }
  add_below_top<n>(even, odd + 1);  // the last shift: word j is even[j] + odd[j + 1]
  from_words<P::N>(even, out);
}

// d = a - b over n words; returns all ones when it borrowed (a < b), else 0.
template <int n>
__device__ __forceinline__ uint32_t sub_words(uint32_t (&d)[n], const uint32_t (&a)[n], const uint32_t (&b)[n]) {
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(a[0]), "r"(b[0]));
#pragma unroll
  for (int j = 1; j < n; ++j) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(d[j]) : "r"(a[j]), "r"(b[j]));
  uint32_t borrow;
  asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
  return borrow;
}

// Each word of `keep` where mask is all ones, else of `other`.
template <int n>
__device__ __forceinline__ void select_words(uint32_t (&out)[n], uint32_t mask, const uint32_t (&keep)[n],
                                             const uint32_t (&other)[n]) {
#pragma unroll
  for (int j = 0; j < n; ++j) out[j] = (keep[j] & mask) | (other[j] & ~mask);
}

// x - m when x >= m; x < 2m.
template <class P>
__device__ __forceinline__ void reduce_once(uint64_t* x) {
  constexpr int n = 2 * P::N;
  uint32_t w[n], m[n], d[n];
  to_words<P::N>(x, w);
  modulus_words<P>(m);
  select_words<n>(w, sub_words<n>(d, w, m), w, d);
  from_words<P::N>(w, x);
}

// out = a + b mod m for a, b < m (the spare top bit keeps a + b within the words).
template <class P>
__device__ __forceinline__ void add_mod(const uint64_t* a, const uint64_t* b, uint64_t* out) {
  constexpr int n = 2 * P::N;
  uint32_t x[n], y[n], s[n];
  to_words<P::N>(a, x);
  to_words<P::N>(b, y);
  add_words<n>(s, x, y);
  from_words<P::N>(s, out);
  reduce_once<P>(out);
}

// out = a - b mod m for a, b < m: the difference, plus m where it borrowed.
template <class P>
__device__ __forceinline__ void sub_mod(const uint64_t* a, const uint64_t* b, uint64_t* out) {
  constexpr int n = 2 * P::N;
  uint32_t x[n], y[n], d[n], m[n];
  to_words<P::N>(a, x);
  to_words<P::N>(b, y);
  modulus_words<P>(m);
  const uint32_t borrow = sub_words<n>(d, x, y);
#pragma unroll
  for (int j = 0; j < n; ++j) m[j] &= borrow;
  add_words<n>(d, d, m);
  from_words<P::N>(d, out);
}

// Double-width values (4N words), for products reduced later, as Fp2's lazy product does.

// One word b of mul_wide: T += a * b at the row's word, a's odd words into `upper` (which starts
// one word above `lower`; its top two words are new) and its even words into `lower`, whose
// carry goes into upper's top word.
template <int n>
__device__ __forceinline__ void mad_row_wide(uint32_t* upper, uint32_t* lower, const uint32_t* a, uint32_t b) {
  mad_words<n - 2>(upper, a + 1, b);
  asm volatile("madc.lo.cc.u32 %0, %2, %3, 0; madc.hi.u32 %1, %2, %3, 0;"
               : "=r"(upper[n - 2]), "=r"(upper[n - 1]) : "r"(a[n - 1]), "r"(b));
  mad_words<n>(lower, a, b);
  asm volatile("addc.u32 %0, %0, 0;" : "+r"(upper[n - 1]));
}

// out = a * b, n words each into 2n, schoolbook. As in mont_mul, every a[j] * b[i] lands on an
// aligned pair of one of two arrays, here at fixed words: out itself (word k in out[k]) and odd
// (word k in odd[k - 1]); row i puts a's even words into out when i is even and into odd when
// it is odd, a's odd words into the other. The arrays are summed once at the end.
template <int n>
__device__ __forceinline__ void mul_wide(const uint32_t* a, const uint32_t* b, uint32_t* out) {
  uint32_t odd[2 * n - 2];
  mul_words<n>(out, a, b[0]);
  mul_words<n>(odd, a + 1, b[0]);
#pragma unroll
  for (int i = 1; i < n; i += 2) {
    mad_row_wide<n>(out + i + 1, odd + i - 1, a, b[i]);
    if (i + 1 < n) mad_row_wide<n>(odd + i + 1, out + i + 1, a, b[i + 1]);
  }
  add_below_top<2 * n - 1>(out + 1, odd);
}

// Row i of sqr_wide: the products a[j] a[i] for i < j < n (n even), at word i + j, in mul_wide's
// two arrays. The chain holding j = n - 1 ("upper") ends in a pair of new words, the one above
// the other chain's ("lower"), which takes the lower chain's carry; row 0 writes every word.
template <int n, int i>
__device__ __forceinline__ void sqr_row(uint32_t* out, uint32_t* odd, const uint32_t* a) {
  constexpr int upper_j = i % 2 == 0 ? i + 1 : i + 2, lower_j = i % 2 == 0 ? i + 2 : i + 1;
  constexpr int upper_words = 2 * ((n - upper_j + 1) / 2), lower_words = 2 * ((n - lower_j) / 2);
  // word k is out[k] for even k, odd[k - 1] for odd k
  uint32_t* upper = (i + upper_j) % 2 == 0 ? out + i + upper_j : odd + i + upper_j - 1;
  uint32_t* lower = (i + lower_j) % 2 == 0 ? out + i + lower_j : odd + i + lower_j - 1;
  if constexpr (i == 0) {
    mul_words<upper_words>(upper, a + upper_j, a[i]);
    if constexpr (lower_words > 0) mul_words<lower_words>(lower, a + lower_j, a[i]);
  } else {
    if constexpr (upper_words > 2) {
      mad_words<upper_words - 2>(upper, a + upper_j, a[i]);
      asm volatile("madc.lo.cc.u32 %0, %2, %3, 0; madc.hi.u32 %1, %2, %3, 0;"
                   : "=r"(upper[upper_words - 2]), "=r"(upper[upper_words - 1]) : "r"(a[n - 1]), "r"(a[i]));
    } else {
      mul_words<2>(upper, a + n - 1, a[i]);
    }
    if constexpr (lower_words > 0) {
      mad_words<lower_words>(lower, a + lower_j, a[i]);
      asm volatile("addc.u32 %0, %0, 0;" : "+r"(upper[upper_words - 1]));
    }
  }
}

template <int n, int i = 0>
__device__ __forceinline__ void sqr_rows(uint32_t* out, uint32_t* odd, const uint32_t* a) {
  if constexpr (i < n - 1) {
    sqr_row<n, i>(out, odd, a);
    sqr_rows<n, i + 1>(out, odd, a);
  }
}

// out = a^2, n words into 2n: the products a[i] a[j] for i < j once (sqr_row), summed and
// doubled, plus the squares a[i]^2 at word 2i; 78 word products for Fp where mul_wide takes 144.
template <int n>
__device__ __forceinline__ void sqr_wide(const uint32_t* a, uint32_t* out) {
  static_assert(n % 2 == 0 && n >= 4, "sqr_wide: an even number of words, at least 4");
  uint32_t cross[2 * n], odd[2 * n - 2];
  sqr_rows<n>(cross, odd, a);  // the rows fill cross's words 2 .. 2n - 3 and odd's 1 .. 2n - 2
  cross[0] = cross[1] = cross[2 * n - 2] = cross[2 * n - 1] = 0;
  add_below_top<2 * n - 1>(cross + 1, odd);  // cross = the sum over i < j
#pragma unroll
  for (int k = 0; k < n; ++k)
    asm("mul.lo.u32 %0, %2, %2; mul.hi.u32 %1, %2, %2;" : "=r"(out[2 * k]), "=r"(out[2 * k + 1]) : "r"(a[k]));
  uint32_t doubled[2 * n];
  doubled[0] = cross[0] << 1;
#pragma unroll
  for (int k = 1; k < 2 * n; ++k) doubled[k] = __funnelshift_l(cross[k - 1], cross[k], 1);
  add_words<2 * n>(out, out, doubled);
}

// One word of redc_wide: mont_mul's row without the product. Unless first, the shift (even[1]
// into the new even[0], the rest two words down as the new odd), then T += q * m with q making
// even[0] zero. q is taken from the sum the shift's add.cc makes, before that chain starts.
template <class P>
__device__ __forceinline__ void reduce_row(uint32_t* even, uint32_t* odd, const uint32_t* m, bool first) {
  constexpr int n = 2 * P::N;
  const uint32_t inv = static_cast<uint32_t>(P::inv());  // -m^-1 mod 2^32
  if (first) {
    add_q_times_modulus<P, OddWords::write>(even, odd, m, even[0] * inv);
  } else {
    const uint32_t q = (even[0] + odd[1]) * inv;
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(even[0]) : "r"(odd[1]));
    add_q_times_modulus<P, OddWords::add_shifted>(even, odd, m, q);
  }
}

// out = t * 2^(-64 N) mod m for t < m 2^(64 N), not yet reduced: out < 2m (N limbs). The low half
// is reduced as mont_mul reduces, to (t_lo + q m) / 2^(64 N) <= m since t_lo, q < 2^(64 N); the
// high half, below m, is added: below 2m, within the words thanks to the modulus's spare bit.
template <class P>
__device__ __forceinline__ void redc_wide(const uint32_t (&t)[4 * P::N], uint64_t* out) {
  constexpr int n = 2 * P::N;
  uint32_t m[n], even[n], odd[n];
  modulus_words<P>(m);
#pragma unroll
  for (int j = 0; j < n; ++j) even[j] = t[j];
#pragma unroll
  for (int i = 0; i < n; i += 2) {
    reduce_row<P>(even, odd, m, i == 0);
    reduce_row<P>(odd, even, m, false);
  }
  add_below_top<n>(even, odd + 1);  // the last shift, as in mont_mul
  add_words<n>(even, even, t + n);
  from_words<P::N>(even, out);
}

// d = a - b for double-width a, b < m 2^(64 N), plus m 2^(64 N) where it borrowed: d = a - b
// mod m 2^(64 N), below m 2^(64 N), a value redc_wide takes.
template <class P>
__device__ __forceinline__ void sub_wide_mod(uint32_t (&d)[4 * P::N], const uint32_t (&a)[4 * P::N],
                                             const uint32_t (&b)[4 * P::N]) {
  constexpr int n = 2 * P::N;
  uint32_t m[n];
  modulus_words<P>(m);
  const uint32_t borrow = sub_words<2 * n>(d, a, b);
#pragma unroll
  for (int j = 0; j < n; ++j) m[j] &= borrow;
  add_words<n>(d + n, d + n, m);  // its carry out, where it borrowed, is the borrow's 2^(128 N)
}

// out = (a b - c d) 2^(-64 N) mod m for a, b, c, d < m, not yet reduced: out < 2m. Two
// double-width products and their difference (plus m 2^(64 N) where negative), reduced once
// where two Montgomery products are reduced twice.
template <class P>
__device__ __forceinline__ void mont_mul_sub_mul(const uint64_t* a, const uint64_t* b, const uint64_t* c,
                                                 const uint64_t* d, uint64_t* out) {
  constexpr int n = 2 * P::N;
  uint32_t x[n], y[n], ab[2 * n], cd[2 * n];
  to_words<P::N>(a, x);
  to_words<P::N>(b, y);
  mul_wide<n>(x, y, ab);
  to_words<P::N>(c, x);
  to_words<P::N>(d, y);
  mul_wide<n>(x, y, cd);
  sub_wide_mod<P>(ab, ab, cd);
  redc_wide<P>(ab, out);
}

// out = a^2 2^(-64 N) mod m, not yet reduced: out < 2m.
template <class P>
__device__ __forceinline__ void mont_sqr(const uint64_t* a, uint64_t* out) {
  constexpr int n = 2 * P::N;
  uint32_t x[n], t[2 * n];
  to_words<P::N>(a, x);
  sqr_wide<n>(x, t);
  redc_wide<P>(t, out);
}

}  // namespace zk::ff::ptx
#endif
