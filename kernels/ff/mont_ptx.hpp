// mont_ptx.hpp — the device path of mont_t's Montgomery product: CIOS over 32-bit words with the
// PTX carry chains (mad.lo.cc / madc.hi.cc), which the GPU executes natively, instead of 64-bit
// limbs whose products and carries it must emulate. Same representation (64-bit limbs read as
// pairs of 32-bit words, R = 2^(64N)), same result, checked against the host path by the GPU
// tests. The even and odd words of each row go through two separate carry chains, so every
// instruction's low or high half lands on the word the chain is at. Device code only.
#pragma once
#include <cstdint>

#if defined(__CUDA_ARCH__)
namespace zk::ff::ptx {

// t[0..n+1] += a[0..n-1] * b (n even), as two carry chains over the even and odd words of a.
template <int n>
__device__ __forceinline__ void mad_row(uint32_t (&t)[n + 2], const uint32_t (&a)[n], uint32_t b) {
  asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(a[0]), "r"(b));
  asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(a[0]), "r"(b));
#pragma unroll
  for (int j = 2; j < n; j += 2) {
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(a[j]), "r"(b));
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(a[j]), "r"(b));
  }
  asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[n]));
  asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[n + 1]));
  asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(a[1]), "r"(b));
  asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[2]) : "r"(a[1]), "r"(b));
#pragma unroll
  for (int j = 3; j < n; j += 2) {
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(a[j]), "r"(b));
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(a[j]), "r"(b));
  }
  asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[n + 1]));
}

// out = a * b * 2^(-64 N) mod m, not yet reduced: out < 2m. N 64-bit limbs each.
template <class P>
__device__ __forceinline__ void mont_mul(const uint64_t* a, const uint64_t* b, uint64_t* out) {
  constexpr int n = 2 * P::N;
  uint32_t x[n], y[n], m[n], t[n + 2];
#pragma unroll
  for (int i = 0; i < P::N; ++i) {
    x[2 * i] = static_cast<uint32_t>(a[i]), x[2 * i + 1] = static_cast<uint32_t>(a[i] >> 32);
    y[2 * i] = static_cast<uint32_t>(b[i]), y[2 * i + 1] = static_cast<uint32_t>(b[i] >> 32);
    m[2 * i] = static_cast<uint32_t>(P::modulus(i)), m[2 * i + 1] = static_cast<uint32_t>(P::modulus(i) >> 32);
  }
#pragma unroll
  for (int i = 0; i < n + 2; ++i) t[i] = 0;
  const uint32_t inv = static_cast<uint32_t>(P::inv());  // -m^-1 mod 2^32
#pragma unroll
  for (int i = 0; i < n; ++i) {
    mad_row<n>(t, x, y[i]);
    mad_row<n>(t, m, t[0] * inv);  // makes t[0] zero
#pragma unroll
    for (int j = 0; j <= n; ++j) t[j] = t[j + 1];
    t[n + 1] = 0;
  }
#pragma unroll
  for (int i = 0; i < P::N; ++i) out[i] = (uint64_t{t[2 * i + 1]} << 32) | t[2 * i];
}

}  // namespace zk::ff::ptx
#endif
