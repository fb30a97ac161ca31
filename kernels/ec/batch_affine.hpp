// batch_affine.hpp — Jacobian to affine for many points with one field inversion per chunk
// (Montgomery's trick), in parallel on the CPU. Points at infinity map to the all-zero encoding.
#pragma once
#include <span>
#include <stdexcept>
#include <vector>

#include "kernels/ec/jacobian.hpp"
#include "kernels/util/parallel.hpp"

namespace zk::ec {

template <class Curve>
void to_affine_batch(std::span<const jacobian_t<Curve>> in, std::span<affine_t<Curve>> out) {
  using F = typename Curve::field;
  if (in.size() != out.size()) throw std::invalid_argument("to_affine_batch: size mismatch");
  parallel_for(in.size(), [&](size_t begin, size_t end) {
    std::vector<F> prefix(end - begin);
    F acc = F::one();
    for (size_t i = begin; i < end; ++i) {
      prefix[i - begin] = acc;
      if (!in[i].is_infinity()) acc = acc * in[i].Z;
    }
    F inv = acc.inverse();
    for (size_t i = end; i-- > begin;) {
      if (in[i].is_infinity()) {
        out[i] = affine_t<Curve>::infinity();
        continue;
      }
      F zi = inv * prefix[i - begin];
      inv = inv * in[i].Z;
      F zi2 = zi.sqr();
      out[i] = {in[i].X * zi2, in[i].Y * zi2 * zi};
    }
  }, 1024);
}

}  // namespace zk::ec
