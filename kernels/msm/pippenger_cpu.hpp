// pippenger_cpu.hpp — multi-scalar multiplication sum_i k_i P_i on the CPU (G1 and G2), the
// reference for the GPU MSM and the CPU backend of the prover.
//
//  - msm():       Pippenger's bucket method with signed (Booth-recoded) windows: digits in
//                 [-2^(c-1), 2^(c-1)], 2^(c-1) buckets per window (affine ones filled by batched
//                 additions for large windows: msm_policy.hpp); windows x point-chunks run in
//                 parallel, each with its own buckets.
//  - sum_points(): the "batch addition" of bases whose scalar is 1.
//  - msm_split(): supraseal's split of a witness MSM: scalars equal to 0 are skipped, those equal
//                 to 1 go to sum_points, the rest ("significant") to msm(). Reports the counts.
// Scalars are Fr elements in Montgomery form (as the prover holds them); bases are affine with
// the all-zero point at infinity. Sizes must match. Thread-safe; uses worker_threads().
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "kernels/ec/bls12-381.hpp"
#include "kernels/msm/affine_buckets.hpp"
#include "kernels/msm/msm_policy.hpp"
#include "kernels/util/parallel.hpp"

namespace zk::msm {

using bls12_381::Fr;

struct Scalar256 {
  uint64_t limbs[4];
  // Bits [lo, lo+count) (count <= 32), zero above bit 255 and below bit 0.
  uint32_t bits(int lo, int count) const {
    if (lo < 0) return bits(0, count + lo) << -lo;
    if (lo >= 256 || count <= 0) return 0;
    int word = lo / 64, shift = lo % 64;
    uint64_t v = limbs[word] >> shift;
    if (shift + count > 64 && word + 1 < 4) v |= limbs[word + 1] << (64 - shift);
    return static_cast<uint32_t>(v & ((uint64_t{1} << count) - 1));
  }
};

// Signed digit of window w (Booth recoding over bits [wc-1, wc+c-1]).
inline int32_t signed_digit(const Scalar256& s, int w, int c) {
  uint32_t v = s.bits(w * c - 1, c + 1);
  int32_t low = v & 1, mid = (v >> 1) & ((1u << (c - 1)) - 1), top = (v >> c) & 1;
  return low + mid - top * (1 << (c - 1));
}

inline std::vector<Scalar256> to_canonical_scalars(std::span<const Fr> scalars) {
  std::vector<Scalar256> out(scalars.size());
  parallel_for(scalars.size(), [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) scalars[i].to_canonical(out[i].limbs);
  }, 4096);
  return out;
}

template <class Curve>
ec::jacobian_t<Curve> sum_points(std::span<const ec::affine_t<Curve>> points) {
  using Point = ec::jacobian_t<Curve>;
  const size_t chunks = parallel_blocks(points.size(), 1024);
  std::vector<Point> partial(chunks, Point::infinity());
  parallel_for(chunks, [&](size_t cb, size_t ce) {
    for (size_t c = cb; c < ce; ++c)
      for (size_t i = points.size() * c / chunks; i < points.size() * (c + 1) / chunks; ++i)
        partial[c] += points[i];
  });
  Point total = Point::infinity();
  for (const auto& p : partial) total += p;
  return total;
}

template <class Curve>
ec::jacobian_t<Curve> msm_canonical(std::span<const ec::affine_t<Curve>> bases,
                                    std::span<const Scalar256> scalars) {
  using Point = ec::jacobian_t<Curve>;
  if (bases.size() != scalars.size()) throw std::invalid_argument("msm: bases and scalars differ in size");
  size_t n = bases.size();
  if (n == 0) return Point::infinity();
  int c0 = CpuMsmPolicy::window_bits(n, 1);
  size_t windows = CpuMsmPolicy::windows(c0);
  size_t chunks_per_window = std::max<size_t>(1, (2 * worker_threads() + windows - 1) / windows);
  chunks_per_window = std::min(chunks_per_window, std::max<size_t>(1, n / 4096));
  int c = CpuMsmPolicy::window_bits(n, chunks_per_window);
  windows = CpuMsmPolicy::windows(c);
  size_t tasks = windows * chunks_per_window;
  std::vector<Point> task_sums(tasks, Point::infinity());
  auto accumulate = [&]<class Buckets>(size_t tb, size_t te) {
    Buckets buckets(size_t{1} << (c - 1));
    for (size_t task = tb; task < te; ++task) {
      int w = static_cast<int>(task / chunks_per_window);
      size_t chunk = task % chunks_per_window;
      buckets.reset();
      for (size_t i = n * chunk / chunks_per_window; i < n * (chunk + 1) / chunks_per_window; ++i) {
        int32_t d = signed_digit(scalars[i], w, c);
        if (d > 0) buckets.add(d - 1, bases[i]);
        else if (d < 0) buckets.add(-d - 1, -bases[i]);
      }
      buckets.finish();
      // sum_k k * bucket[k-1] by running sums from the top bucket down.
      Point running = Point::infinity(), sum = Point::infinity();
      for (size_t k = buckets.size(); k-- > 0;) {
        buckets.add_bucket_to(k, running);
        sum += running;
      }
      task_sums[task] = sum;
    }
  };
  parallel_for(tasks, [&](size_t tb, size_t te) {
    if (CpuMsmPolicy::affine_buckets(c)) accumulate.template operator()<AffineBuckets<Curve>>(tb, te);
    else accumulate.template operator()<JacobianBuckets<Curve>>(tb, te);
  }, 1);
  Point result = Point::infinity();
  for (size_t w = windows; w-- > 0;) {
    for (int b = 0; b < c; ++b) result = result.dbl();
    for (size_t chunk = 0; chunk < chunks_per_window; ++chunk)
      result += task_sums[w * chunks_per_window + chunk];
  }
  return result;
}

template <class Curve>
ec::jacobian_t<Curve> msm(std::span<const ec::affine_t<Curve>> bases, std::span<const Fr> scalars) {
  auto canonical = to_canonical_scalars(scalars);
  return msm_canonical<Curve>(bases, canonical);
}

struct SplitCounts {
  size_t zeros = 0, ones = 0, significant = 0;
};

template <class Curve>
ec::jacobian_t<Curve> msm_split(std::span<const ec::affine_t<Curve>> bases,
                                std::span<const Fr> scalars, SplitCounts* counts = nullptr) {
  if (bases.size() != scalars.size()) throw std::invalid_argument("msm: bases and scalars differ in size");
  std::vector<ec::affine_t<Curve>> one_bases, tail_bases;
  std::vector<Scalar256> tail_scalars;
  const Fr one = Fr::one();
  for (size_t i = 0; i < scalars.size(); ++i) {
    if (scalars[i].is_zero()) continue;
    if (scalars[i] == one) {
      one_bases.push_back(bases[i]);
    } else {
      tail_bases.push_back(bases[i]);
      tail_scalars.emplace_back();
      scalars[i].to_canonical(tail_scalars.back().limbs);
    }
  }
  if (counts) *counts = {scalars.size() - one_bases.size() - tail_bases.size(), one_bases.size(), tail_bases.size()};
  return sum_points<Curve>(one_bases) + msm_canonical<Curve>(tail_bases, tail_scalars);
}

}  // namespace zk::msm
