// fixed_base.hpp — many multiples k_i * G of one base point G, as setup needs them: a table of
// j * 2^(w*k) * G for every w-bit window k and digit j, so each product is one mixed addition per
// window (32 for w = 8) instead of 255 doublings and additions. fixed_base_product() reads such a
// table on the host or the device (fixed_base_cuda.cuh runs it on a GPU); FixedBaseTable builds
// the table and multiplies on every CPU core (worker_threads()).
#pragma once
#include <span>
#include <vector>

#include "kernels/ec/batch_affine.hpp"
#include "kernels/ec/bls12-381.hpp"

namespace zk::ec {

struct FixedBaseLayout {
  static constexpr int window_bits = 8;
  static constexpr int windows = (bls12_381::fr_bits + window_bits - 1) / window_bits;
  static constexpr int digits = (1 << window_bits) - 1;  // nonzero digits per window
  static constexpr size_t entries = size_t{windows} * digits;
};

// scalar * G from `table` (FixedBaseLayout::entries affine points, window-major: entry
// k * digits + j - 1 is j * 2^(w*k) * G).
template <class Curve>
ZK_HD jacobian_t<Curve> fixed_base_product(const affine_t<Curve>* table, const bls12_381::Fr& scalar) {
  using L = FixedBaseLayout;
  uint64_t s[4];
  scalar.to_canonical(s);
  jacobian_t<Curve> r = jacobian_t<Curve>::infinity();
  for (int k = 0; k < L::windows; ++k) {
    const int bit = k * L::window_bits;
    const uint32_t digit = (s[bit / 64] >> (bit % 64)) & L::digits;
    if (digit) r = r + table[static_cast<size_t>(k) * L::digits + digit - 1];
  }
  return r;
}

template <class Curve>
class FixedBaseTable {
 public:
  using Layout = FixedBaseLayout;

  explicit FixedBaseTable(const affine_t<Curve>& base) : table_(Layout::entries) {
    std::vector<jacobian_t<Curve>> jac(table_.size());
    jacobian_t<Curve> window_base = jacobian_t<Curve>::from_affine(base);
    for (int k = 0; k < Layout::windows; ++k) {
      jacobian_t<Curve> acc = window_base;
      for (int j = 0; j < Layout::digits; ++j) {
        jac[static_cast<size_t>(k) * Layout::digits + j] = acc;
        acc = acc + window_base;
      }
      window_base = acc;  // 2^w times the previous window's base
    }
    to_affine_batch<Curve>(jac, table_);
  }

  std::span<const affine_t<Curve>> entries() const { return table_; }
  jacobian_t<Curve> mul(const bls12_381::Fr& scalar) const { return fixed_base_product<Curve>(table_.data(), scalar); }

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
