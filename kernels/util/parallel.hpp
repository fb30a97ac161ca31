// parallel.hpp — the CPU backend's one way to spread work over cores.
//
// parallel_for(n, fn) calls fn(begin, end) on disjoint contiguous chunks covering [0, n), on up
// to worker_threads() threads (the caller's thread takes a chunk too), and returns when all are
// done. An exception thrown by any chunk is rethrown in the caller. worker_threads() defaults to
// the hardware's core count; set_worker_threads() changes it process-wide (--threads). Threads
// that share the cores (the synthesis threads) each hold a CoreShare::Hold while they work: each
// parallel_for call of a holder then runs on max(1, cores / holders) threads, the holders counted
// as the call starts, so one synthesizing alone has every core and two have half each.
// parallel_find_first(n, pred) returns the first index whose pred holds (n if none), whatever
// the thread count. parallel_blocks(n, least) is how many blocks to cut n items into for a
// parallel_for over blocks whose partial results are combined in block order.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace zk {

inline size_t& worker_threads_setting() {
  static size_t threads = std::max(1u, std::thread::hardware_concurrency());
  return threads;
}
class CoreShare;
// The share this thread holds (nullptr: none).
inline const CoreShare*& held_core_share() {
  thread_local const CoreShare* share = nullptr;
  return share;
}
inline size_t worker_threads();

// Cores split evenly between the threads that hold a share of them now.
class CoreShare {
 public:
  explicit CoreShare(size_t cores) : cores_(std::max<size_t>(1, cores)) {}
  CoreShare(const CoreShare&) = delete;
  CoreShare& operator=(const CoreShare&) = delete;

  size_t holders() const { return holders_.load(std::memory_order_relaxed); }
  size_t cores_each() const { return std::max<size_t>(1, cores_ / std::max<size_t>(1, holders())); }

  // While it lives, its thread is one of the holders and its parallel_for calls take its share.
  class Hold {
   public:
    explicit Hold(CoreShare& share) : share_(share), previous_(held_core_share()) {
      share_.holders_.fetch_add(1, std::memory_order_relaxed);
      held_core_share() = &share_;
    }
    ~Hold() {
      held_core_share() = previous_;
      share_.holders_.fetch_sub(1, std::memory_order_relaxed);
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    CoreShare& share_;
    const CoreShare* previous_;
  };

 private:
  size_t cores_;
  std::atomic<size_t> holders_{0};
};

inline size_t worker_threads() {
  const CoreShare* share = held_core_share();
  return share ? std::min(share->cores_each(), worker_threads_setting()) : worker_threads_setting();
}
inline void set_worker_threads(size_t threads) { worker_threads_setting() = std::max<size_t>(1, threads); }

template <class Fn>
void parallel_for(size_t n, Fn&& fn, size_t min_chunk = 1) {
  size_t chunks = std::min(worker_threads(), (n + min_chunk - 1) / std::max<size_t>(min_chunk, 1));
  if (chunks <= 1) {
    if (n) fn(size_t{0}, n);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&](size_t c) {
    try {
      fn(n * c / chunks, n * (c + 1) / chunks);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> threads;
    threads.reserve(chunks - 1);
    for (size_t c = 1; c < chunks; ++c) threads.emplace_back(run, c);
    run(0);
  }
  if (error) std::rethrow_exception(error);
}

// One block per core at most, none smaller than `least` items, never none: block b of B then
// covers items [n * b / B, n * (b + 1) / B).
inline size_t parallel_blocks(size_t n, size_t least) {
  return std::max<size_t>(1, std::min(worker_threads(), n / std::max<size_t>(least, 1)));
}

// The smallest i in [0, n) with pred(i) true, or n. Each chunk runs pred in index order and stops
// at its first hit, so pred runs for every index before the answer and for none after a hit in
// its own chunk.
template <class Pred>
size_t parallel_find_first(size_t n, Pred&& pred, size_t min_chunk = 1) {
  std::atomic<size_t> first = n;
  parallel_for(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      if (pred(i)) {
        size_t seen = first.load();
        while (i < seen && !first.compare_exchange_weak(seen, i)) {
        }
        return;
      }
  }, min_chunk);
  return first.load();
}

}  // namespace zk
