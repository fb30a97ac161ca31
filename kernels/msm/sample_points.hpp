// sample_points.hpp — many distinct points of a group, cheaply, for MSM tests and benchmarks:
// P_i = [k0]G + i*[k1]G (k0, k1 from the seed), one addition per point and a batched conversion
// to affine on every core. The points are valid group elements but not independent: fine for
// checking and timing an MSM (which never relies on independence), never for keys.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/ec/batch_affine.hpp"
#include "kernels/ec/bls12-381.hpp"
#include "kernels/util/parallel.hpp"

namespace zk::msm {

template <class Curve>
std::vector<ec::affine_t<Curve>> sample_points(size_t count, const ec::affine_t<Curve>& generator, uint64_t seed) {
  using Point = ec::jacobian_t<Curve>;
  const uint64_t k0 = seed | 1, k1 = (seed * 0x9e3779b97f4a7c15ull) | 3;
  const Point start = Point::from_affine(generator).mul(&k0, 1);
  const Point step = Point::from_affine(generator).mul(&k1, 1);
  std::vector<Point> jacobian(count);
  parallel_for(count, [&](size_t begin, size_t end) {
    const uint64_t first = begin;
    Point p = start + step.mul(&first, 1);
    for (size_t i = begin; i < end; ++i) {
      jacobian[i] = p;
      p = p + step;
    }
  }, 1024);
  std::vector<ec::affine_t<Curve>> affine(count);
  ec::to_affine_batch<Curve>(jacobian, affine);
  return affine;
}

}  // namespace zk::msm
