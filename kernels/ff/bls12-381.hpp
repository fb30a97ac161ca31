// bls12-381.hpp — the constants of BLS12-381: base field Fp (381 bits, 6 limbs), scalar field
// Fr (255 bits, 4 limbs), the curve parameter x, and the generators of G1 and G2.
// Everything numeric about the curve lives here; fields and groups are generic templates.
// Sources: the BLS12-381 specification (draft-irtf-cfrg-pairing-friendly-curves) and, for the
// roots of unity, ffjavascript's choice (generator 5) so that snarkjs keys and ours agree.
#pragma once
#include <cstdint>

#include "kernels/ff/mont.hpp"

namespace zk::bls12_381 {

#define ZK_LIMB_TABLE(name, ...)                              \
  static ZK_HD_CONSTEXPR uint64_t name(int i) {               \
    constexpr uint64_t v[] = {__VA_ARGS__};                   \
    return v[i];                                              \
  }

// p = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab
struct FpParams {
  static constexpr int N = 6;
  ZK_LIMB_TABLE(modulus, 0xb9feffffffffaaab, 0x1eabfffeb153ffff, 0x6730d2a0f6b0f624,
                0x64774b84f38512bf, 0x4b1ba7b6434bacd7, 0x1a0111ea397fe69a)
  ZK_LIMB_TABLE(one, 0x760900000002fffd, 0xebf4000bc40c0002, 0x5f48985753c758ba,
                0x77ce585370525745, 0x5c071a97a256ec6d, 0x15f65ec3fa80e493)
  ZK_LIMB_TABLE(r2, 0xf4df1f341c341746, 0x0a76e6a609d104f1, 0x8de5476c4c95b6d5,
                0x67eb88a9939d83c0, 0x9a793e85b519952d, 0x11988fe592cae3aa)
  static ZK_HD_CONSTEXPR uint64_t inv() { return 0x89f3fffcfffcfffd; }
};

// r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
struct FrParams {
  static constexpr int N = 4;
  ZK_LIMB_TABLE(modulus, 0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805,
                0x73eda753299d7d48)
  ZK_LIMB_TABLE(one, 0x00000001fffffffe, 0x5884b7fa00034802, 0x998c4fefecbc4ff5,
                0x1824b159acc5056f)
  ZK_LIMB_TABLE(r2, 0xc999e990f3f29c6d, 0x2b6cedcb87925c23, 0x05d314967254398f,
                0x0748d9d99f59ff11)
  static ZK_HD_CONSTEXPR uint64_t inv() { return 0xfffffffeffffffff; }
};

using Fp = ff::mont_t<FpParams>;
using Fr = ff::mont_t<FrParams>;

// Canonical limbs of the group order r, for scalar loops and subgroup checks.
ZK_LIMB_TABLE(fr_modulus, 0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805,
              0x73eda753299d7d48)
constexpr int fr_bits = 255;
constexpr int fp_bits = 381;

// The curve parameter x = -0xd201000000010000 (|x| and its sign apart).
constexpr uint64_t curve_x_abs = 0xd201000000010000;
constexpr bool curve_x_is_negative = true;

// Two-adicity of r-1 and the 2^32-th root of unity 5^((r-1)/2^32) (ffjavascript's, canonical).
constexpr int fr_two_adicity = 32;
ZK_LIMB_TABLE(fr_root_of_unity_2_32, 0x1b788f500b912f1f, 0xc4024ff270b3e094, 0x0fd56dc8d168d6c0,
              0x0212d79e5b416b6f)

// Generators (canonical limbs). G1: y^2 = x^3 + 4 over Fp. G2: y^2 = x^3 + 4(1+u) over Fp2.
ZK_LIMB_TABLE(g1_x, 0xfb3af00adb22c6bb, 0x6c55e83ff97a1aef, 0xa14e3a3f171bac58,
              0xc3688c4f9774b905, 0x2695638c4fa9ac0f, 0x17f1d3a73197d794)
ZK_LIMB_TABLE(g1_y, 0x0caa232946c5e7e1, 0xd03cc744a2888ae4, 0x00db18cb2c04b3ed,
              0xfcf5e095d5d00af6, 0xa09e30ed741d8ae4, 0x08b3f481e3aaa0f1)
ZK_LIMB_TABLE(g2_x_c0, 0xd48056c8c121bdb8, 0x0bac0326a805bbef, 0xb4510b647ae3d177,
              0xc6e47ad4fa403b02, 0x260805272dc51051, 0x024aa2b2f08f0a91)
ZK_LIMB_TABLE(g2_x_c1, 0xe5ac7d055d042b7e, 0x334cf11213945d57, 0xb5da61bbdc7f5049,
              0x596bd0d09920b61a, 0x7dacd3a088274f65, 0x13e02b6052719f60)
ZK_LIMB_TABLE(g2_y_c0, 0xe193548608b82801, 0x923ac9cc3baca289, 0x6d429a695160d12c,
              0xadfd9baa8cbdd3a7, 0x8cc9cdc6da2e351a, 0x0ce5d527727d6e11)
ZK_LIMB_TABLE(g2_y_c1, 0xaaa9075ff05f79be, 0x3f370d275cec1da1, 0x267492ab572e99ab,
              0xcb3e287e85a763af, 0x32acd2b02bc28b99, 0x0606c4a02ea734cc)

#undef ZK_LIMB_TABLE

// Builds a field element from a ZK_LIMB_TABLE function of canonical limbs (host side).
template <class F>
inline F field_from_table(uint64_t (*table)(int)) {
  uint64_t x[F::N];
  for (int i = 0; i < F::N; ++i) x[i] = table(i);
  return F::from_canonical(x);
}

}  // namespace zk::bls12_381
