// memory_budget.hpp — the job's host memory budget. Every large host allocation of a job (the
// proving key, the pinned pool, each partition's pageable a/b/c and witness, each worker's
// buffers) holds a Reservation for its bytes, returned when the Reservation is destroyed.
// reserve() throws zk::Error naming what did not fit and the budget, so nothing is allocated
// beyond it; the scheduling policy admits a partition only when its bytes fit what is left for
// partitions, so the engine's partition reservations always succeed. Thread-safe; Reservations
// are move-only and must not outlive their budget. reserved_bytes_max() is the high-water mark.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

namespace zk::pipeline {

class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t total_bytes) : total_bytes_(total_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  class Reservation {
   public:
    Reservation() = default;
    uint64_t bytes() const { return held_ ? held_.get_deleter().bytes : 0; }

   private:
    friend class MemoryBudget;
    struct GiveBack {
      uint64_t bytes;
      void operator()(MemoryBudget* budget) const noexcept { budget->give_back(bytes); }
    };
    Reservation(MemoryBudget* budget, uint64_t bytes) : held_(budget, GiveBack{bytes}) {}
    std::unique_ptr<MemoryBudget, GiveBack> held_;  // gives the bytes back when destroyed or replaced
  };

  // `what` names the allocation in the error ("the pinned pool of 4 slabs").
  Reservation reserve(uint64_t bytes, std::string_view what);

  uint64_t reserved_bytes() const;
  uint64_t reserved_bytes_max() const;
  uint64_t available_bytes() const { return total_bytes_ - reserved_bytes(); }

 private:
  void give_back(uint64_t bytes) noexcept;
  const uint64_t total_bytes_;
  mutable std::mutex mutex_;
  uint64_t reserved_bytes_ = 0;
  uint64_t reserved_bytes_max_ = 0;
};

}  // namespace zk::pipeline
