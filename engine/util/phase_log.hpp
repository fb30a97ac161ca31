// phase_log.hpp — timed spans of a proof's phases (synth, ntt, msm_h, batch_add, tail_msm, ...),
// named as in the shared trace schema. A PhaseLog is filled by RAII scopes and read afterwards
// (printed by the CLI, turned into trace rows by the engine). Thread-safe.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace zk {

struct PhaseSpan {
  std::string phase;
  double start_s, end_s;
  uint64_t items;
  double seconds() const { return end_s - start_s; }
};

class PhaseLog {
 public:
  using Clock = std::chrono::steady_clock;
  explicit PhaseLog(Clock::time_point origin = Clock::now()) : origin_(origin) {}

  class Scope {
   public:
    Scope(PhaseLog* log, std::string phase, uint64_t items)
        : log_(log), phase_(std::move(phase)), items_(items), start_(Clock::now()) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() {
      if (log_) log_->add({phase_, log_->seconds_at(start_), log_->seconds_at(Clock::now()), items_});
    }

   private:
    PhaseLog* log_;
    std::string phase_;
    uint64_t items_;
    Clock::time_point start_;
  };

  void add(PhaseSpan span) {
    std::lock_guard lock(mutex_);
    spans_.push_back(std::move(span));
  }
  std::vector<PhaseSpan> spans() const {
    std::lock_guard lock(mutex_);
    return spans_;
  }
  double seconds_at(Clock::time_point t) const { return std::chrono::duration<double>(t - origin_).count(); }

 private:
  Clock::time_point origin_;
  mutable std::mutex mutex_;
  std::vector<PhaseSpan> spans_;
};

// A scope that records into `log` when it is non-null, and does nothing otherwise.
inline PhaseLog::Scope timed(PhaseLog* log, std::string phase, uint64_t items = 0) {
  return PhaseLog::Scope(log, std::move(phase), items);
}

}  // namespace zk
