// msm_policy.hpp — how the Pippenger MSM chooses its window, in one named place.
//
// Cost model, in field multiplications: ceil((bits+1)/c) windows, each adding every point into
// a bucket and reducing its 2^(c-1) buckets with a mixed and a Jacobian addition (~27) per bucket
// set (one per chunk when a window is split across threads). The window minimizing the total is
// chosen. Buckets are affine (batched affine addition, ~9.5 per point measured) when a window has at least
// 1024 of them, so a batch of 512 amortizes its inversion; below that, Jacobian (mixed
// addition, 11). Measured with callgrind (instructions, BMI2/ADX build): 16384 points at c = 12,
// affine 1.19 G against Jacobian 1.55 G (-23%); 4096 points at c = 9, affine +5%.
#pragma once
#include <cstddef>

namespace zk::msm {

struct CpuMsmPolicy {
  static constexpr int scalar_bits = 255;
  static constexpr int min_window_bits = 2;
  static constexpr int max_window_bits = 18;  // 2^17 buckets x 144 B (G1) = 19 MB per chunk

  static int windows(int c) { return (scalar_bits + 1 + c - 1) / c; }
  static bool affine_buckets(int c) { return (1 << (c - 1)) >= 1024; }
  static double point_add_cost(int c) { return affine_buckets(c) ? 9.5 : 11.0; }

  // Window bits for n points spread over `chunks_per_window` bucket sets per window.
  static int window_bits(size_t n, size_t chunks_per_window) {
    int best = min_window_bits;
    double best_cost = 0;
    for (int c = min_window_bits; c <= max_window_bits; ++c) {
      double cost = windows(c) * (point_add_cost(c) * double(n) +
                                  27.0 * double(chunks_per_window) * double(size_t{1} << (c - 1)));
      if (c == min_window_bits || cost < best_cost) best = c, best_cost = cost;
    }
    return best;
  }
};

}  // namespace zk::msm
