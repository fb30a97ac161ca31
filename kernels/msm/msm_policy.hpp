// msm_policy.hpp — how the Pippenger MSM chooses its window, in one named place.
//
// Cost model, in field multiplications: ceil((bits+1)/c) windows, each adding every point into
// an affine bucket (~7: batched affine addition) and reducing its 2^(c-1) buckets with a mixed
// and a Jacobian addition (~27) per bucket set (one per chunk when a window is split across
// threads). The window minimizing the total is chosen.
#pragma once
#include <cstddef>

namespace zk::msm {

struct CpuMsmPolicy {
  static constexpr int scalar_bits = 255;
  static constexpr int min_window_bits = 2;
  static constexpr int max_window_bits = 18;  // 2^17 buckets x 144 B (G1) = 19 MB per chunk

  static int windows(int c) { return (scalar_bits + 1 + c - 1) / c; }

  // Window bits for n points spread over `chunks_per_window` bucket sets per window.
  static int window_bits(size_t n, size_t chunks_per_window) {
    int best = min_window_bits;
    double best_cost = 0;
    for (int c = min_window_bits; c <= max_window_bits; ++c) {
      double cost = windows(c) * (7.0 * double(n) + 27.0 * double(chunks_per_window) * double(size_t{1} << (c - 1)));
      if (c == min_window_bits || cost < best_cost) best = c, best_cost = cost;
    }
    return best;
  }
};

}  // namespace zk::msm
