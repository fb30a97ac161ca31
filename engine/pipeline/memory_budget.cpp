#include "engine/pipeline/memory_budget.hpp"

#include <algorithm>
#include <utility>

#include "engine/util/error.hpp"
#include "engine/util/machine.hpp"

namespace zk::pipeline {

MemoryBudget::Reservation MemoryBudget::reserve(uint64_t bytes, std::string_view what) {
  std::lock_guard lock(mutex_);
  if (bytes > total_bytes_ - reserved_bytes_)
    fail("{} needs {} of host memory but the budget has {} left ({} of {} reserved): raise --budget "
         "or lower the setting that sizes it",
         what, format_bytes(bytes), format_bytes(total_bytes_ - reserved_bytes_), format_bytes(reserved_bytes_),
         format_bytes(total_bytes_));
  reserved_bytes_ += bytes;
  reserved_bytes_max_ = std::max(reserved_bytes_max_, reserved_bytes_);
  return Reservation(this, bytes);
}

void MemoryBudget::give_back(uint64_t bytes) noexcept {
  std::lock_guard lock(mutex_);
  reserved_bytes_ -= bytes;
}

uint64_t MemoryBudget::reserved_bytes() const {
  std::lock_guard lock(mutex_);
  return reserved_bytes_;
}

uint64_t MemoryBudget::reserved_bytes_max() const {
  std::lock_guard lock(mutex_);
  return reserved_bytes_max_;
}

}  // namespace zk::pipeline
