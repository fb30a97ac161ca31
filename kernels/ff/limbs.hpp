// limbs.hpp — carry-propagating 64-bit limb primitives shared by every prime field.
// Host: unsigned __int128. Device: __umul64hi. All functions are pure and branch-free.
#pragma once
#include <cstdint>

#include "kernels/util/host_device.hpp"

#if !defined(__CUDA_ARCH__) && defined(__x86_64__)
#include <x86intrin.h>
#define ZK_X86_CARRY_INTRINSICS 1
#endif

namespace zk::ff {

// Returns lo(a*b + c + carry) and sets carry to its high word. Cannot overflow 128 bits.
ZK_HD uint64_t mac(uint64_t a, uint64_t b, uint64_t c, uint64_t& carry) {
#if defined(__CUDA_ARCH__)
  uint64_t lo = a * b;
  uint64_t hi = __umul64hi(a, b);
  lo += c;
  hi += lo < c;
  lo += carry;
  hi += lo < carry;
  carry = hi;
  return lo;
#else
  unsigned __int128 t = static_cast<unsigned __int128>(a) * b + c + carry;
  carry = static_cast<uint64_t>(t >> 64);
  return static_cast<uint64_t>(t);
#endif
}

// Returns a + b + carry (carry in {0,1}) and sets carry to the carry out (x86: one adc).
ZK_HD uint64_t adc(uint64_t a, uint64_t b, uint64_t& carry) {
#if defined(ZK_X86_CARRY_INTRINSICS)
  unsigned long long out;
  carry = _addcarry_u64(static_cast<unsigned char>(carry), a, b, &out);
  return out;
#endif
  uint64_t s = a + b;
  uint64_t c1 = s < a;
  uint64_t t = s + carry;
  carry = c1 | (t < s);
  return t;
}

// Returns a - b - borrow (borrow in {0,1}) and sets borrow to the borrow out.
ZK_HD uint64_t sbb(uint64_t a, uint64_t b, uint64_t& borrow) {
#if defined(ZK_X86_CARRY_INTRINSICS)
  unsigned long long out;
  borrow = _subborrow_u64(static_cast<unsigned char>(borrow), a, b, &out);
  return out;
#endif
  uint64_t d = a - b;
  uint64_t b1 = a < b;
  uint64_t t = d - borrow;
  borrow = b1 | (d < borrow);
  return t;
}

}  // namespace zk::ff
