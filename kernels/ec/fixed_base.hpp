// fixed_base.hpp — many multiples k_i * G of one base point G, as setup needs them: a table of
// j * 2^(w*k) * G for every w-bit window k and digit j, so each product is one mixed addition per
// window (32 for w = 8) instead of 255 doublings and additions. Parallel over worker_threads().
#pragma once
#include <span>
#include <vector>

#include "kernels/ec/batch_affine.hpp"
#include "kernels/ec/bls12-381.hpp"

namespace zk::ec {

template <class Curve>
class FixedBaseTable {
 public:
  static constexpr int window_bits = 8;
  static constexpr int windows = (bls12_381::fr_bits + window_bits - 1) / window_bits;
  static constexpr int digits = (1 << window_bits) - 1;

  explicit FixedBaseTable(const affine_t<Curve>& base) : table_(size_t{windows} * digits) {
    std::vector<jacobian_t<Curve>> jac(table_.size());
    jacobian_t<Curve> window_base = jacobian_t<Curve>::from_affine(base);
    for (int k = 0; k < windows; ++k) {
      jacobian_t<Curve> acc = window_base;
      for (int j = 0; j < digits; ++j) {
        jac[static_cast<size_t>(k) * digits + j] = acc;
        acc = acc + window_base;
      }
      window_base = acc;  // 2^w times the previous window's base
    }
    to_affine_batch<Curve>(jac, table_);
  }

  jacobian_t<Curve> mul(const bls12_381::Fr& scalar) const {
    uint64_t s[4];
    scalar.to_canonical(s);
    jacobian_t<Curve> r = jacobian_t<Curve>::infinity();
    for (int k = 0; k < windows; ++k) {
      int bit = k * window_bits;
      uint32_t digit = (s[bit / 64] >> (bit % 64)) & digits;
      if (digit) r += table_[static_cast<size_t>(k) * digits + digit - 1];
    }
    return r;
  }

  // out[i] = scalars[i] * base, affine.
  std::vector<affine_t<Curve>> mul_many(std::span<const bls12_381::Fr> scalars) const {
    std::vector<jacobian_t<Curve>> jac(scalars.size());
    parallel_for(scalars.size(), [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) jac[i] = mul(scalars[i]);
    }, 256);
    std::vector<affine_t<Curve>> out(scalars.size());
    to_affine_batch<Curve>(jac, out);
    return out;
  }

 private:
  std::vector<affine_t<Curve>> table_;
};

}  // namespace zk::ec
