// affine_buckets.hpp — Pippenger buckets: Jacobian ones for small windows, and ones kept in affine coordinates and filled by batched affine
// additions: pending additions to distinct buckets share one field inversion (Montgomery's
// trick), so each addition costs about 5 multiplications and a squaring instead of the 7+4 of a
// Jacobian mixed addition. An addition to a bucket already in the pending batch waits for the
// next batch in a queue bounded by the batch size; past that it goes into the bucket's Jacobian
// overflow sum (windows with few distinct digits, like a scalar's top window, would otherwise
// make the queue and the number of inversions grow without bound). Host-only; one per thread.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/ec/jacobian.hpp"

namespace zk::msm {

// Buckets as Jacobian sums filled by mixed additions: the choice for windows with few buckets,
// where a batch could not amortize an inversion. Same interface as AffineBuckets.
template <class Curve>
class JacobianBuckets {
 public:
  using Affine = ec::affine_t<Curve>;
  using Point = ec::jacobian_t<Curve>;
  explicit JacobianBuckets(size_t count) : buckets_(count, Point::infinity()) {}
  void reset() { std::fill(buckets_.begin(), buckets_.end(), Point::infinity()); }
  size_t size() const { return buckets_.size(); }
  void add(uint32_t index, const Affine& p) { buckets_[index] += p; }
  void finish() {}
  // running += bucket k.
  void add_bucket_to(size_t k, Point& running) const { running += buckets_[k]; }

 private:
  std::vector<Point> buckets_;
};

template <class Curve>
class AffineBuckets {
 public:
  using Affine = ec::affine_t<Curve>;
  using Point = ec::jacobian_t<Curve>;
  using Field = typename Curve::field;
  // Pending additions per inversion: the inversion (~570 products) is amortized to ~1 product.
  static constexpr size_t batch_size = 512;

  // With few buckets a batch is capped at half of them, so conflicts do not pile up.
  explicit AffineBuckets(size_t count)
      : buckets_(count, Affine::infinity()),
        overflow_(count, Point::infinity()),
        pending_flag_(count, 0),
        batch_limit_(std::max<size_t>(1, std::min(batch_size, count / 2))) {
    pending_.reserve(batch_limit_);
    prefix_.resize(batch_limit_);
    denominators_.resize(batch_limit_);
  }

  void reset() {
    std::fill(buckets_.begin(), buckets_.end(), Affine::infinity());
    std::fill(overflow_.begin(), overflow_.end(), Point::infinity());
  }
  size_t size() const { return buckets_.size(); }

  // buckets[index] += p.
  void add(uint32_t index, const Affine& p) {
    enqueue(index, p);
    if (pending_.size() >= batch_limit_) {
      flush();
      requeue_deferred();
    }
  }

  // Completes every pending and deferred addition; then add_bucket_to() reads the totals.
  void finish() {
    while (!pending_.empty() || !deferred_.empty()) {
      flush();
      requeue_deferred();
    }
  }
  // running += bucket k: a mixed addition, plus the overflow sum where there is one.
  void add_bucket_to(size_t k, Point& running) const {
    running += buckets_[k];
    if (!overflow_[k].is_infinity()) running += overflow_[k];
  }

 private:
  struct Addition {
    uint32_t bucket;
    Affine point;
  };

  void enqueue(uint32_t index, const Affine& p) {
    if (p.is_infinity()) return;
    if (pending_flag_[index]) {
      if (deferred_.size() < batch_limit_) deferred_.push_back({index, p});
      else overflow_[index] += p;
    } else if (buckets_[index].is_infinity()) {
      buckets_[index] = p;
    } else {
      pending_flag_[index] = 1;
      pending_.push_back({index, p});
    }
  }

  // Moves deferred additions into the batch (flushing whenever it fills); those that conflict
  // again stay deferred.
  void requeue_deferred() {
    std::vector<Addition> retry;
    retry.swap(deferred_);
    for (const auto& a : retry) {
      enqueue(a.bucket, a.point);
      if (pending_.size() >= batch_limit_) flush();
    }
  }

  // Applies the pending additions with one inversion of all slope denominators.
  void flush() {
    size_t n = pending_.size();
    if (n == 0) return;
    // prefix_[k] = product of the denominators before k.
    Field acc = Field::one();
    for (size_t k = 0; k < n; ++k) {
      prefix_[k] = acc;
      denominators_[k] = denominator(k);
      acc = acc * denominators_[k];
    }
    Field inv = acc.inverse();
    for (size_t k = n; k-- > 0;) {
      Field d_inv = inv * prefix_[k];
      inv = inv * denominators_[k];
      apply(k, d_inv);
    }
    for (const auto& a : pending_) pending_flag_[a.bucket] = 0;
    pending_.clear();
  }

  // Slope denominator of pending addition k: x_P - x_B, or 2y for a doubling, or 1 when the
  // sum is infinity (B = -P).
  Field denominator(size_t k) const {
    const Affine& b = buckets_[pending_[k].bucket];
    const Affine& p = pending_[k].point;
    if (b.x != p.x) return p.x - b.x;
    if (b.y == p.y) return b.y.dbl();
    return Field::one();
  }

  void apply(size_t k, const Field& d_inv) {
    Affine& b = buckets_[pending_[k].bucket];
    const Affine& p = pending_[k].point;
    Field slope;
    if (b.x != p.x) {
      slope = (p.y - b.y) * d_inv;
    } else if (b.y == p.y) {
      Field x2 = b.x.sqr();
      slope = (x2.dbl() + x2) * d_inv;
    } else {
      b = Affine::infinity();
      return;
    }
    Field x3 = slope.sqr() - b.x - p.x;
    b.y = slope * (b.x - x3) - b.y;
    b.x = x3;
  }

  std::vector<Affine> buckets_;
  std::vector<Point> overflow_;
  std::vector<uint8_t> pending_flag_;
  size_t batch_limit_;
  std::vector<Addition> pending_, deferred_;
  std::vector<Field> prefix_, denominators_;
};

}  // namespace zk::msm
