// Contract: FifoSemaphore<WaitQueue> is a counting semaphore over a cooperative runtime's FIFO
// WaitQueue (LogicalRuntime's, the model's SimGrid one): a release hands its unit to the longest
// waiter, so who gets a copy engine or a compute section is deterministic. BasicLockable (for
// std::unique_lock and std::lock_guard); taking a free unit and releasing one nobody waits for
// never block or switch actors. For cooperative runtimes only: not thread-safe.
#pragma once

#include <cstdint>

namespace zkpipe::runtime {

template <class WaitQueue>
class FifoSemaphore {
 public:
  explicit FifoSemaphore(std::uint32_t units) : free_units_(units) {}
  void lock() {
    if (free_units_ > 0) {
      --free_units_;
    } else {
      waiters_.wait();  // woken by unlock(), which hands its unit over
    }
  }
  void unlock() {
    if (!waiters_.notify_one()) ++free_units_;
  }

 private:
  std::uint32_t free_units_;
  WaitQueue waiters_;
};

}  // namespace zkpipe::runtime
