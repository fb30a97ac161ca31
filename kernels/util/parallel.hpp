// parallel.hpp — the CPU backend's one way to spread work over cores.
//
// parallel_for(n, fn) calls fn(begin, end) on disjoint contiguous chunks covering [0, n), on up
// to worker_threads() threads (the caller's thread takes a chunk too), and returns when all are
// done. An exception thrown by any chunk is rethrown in the caller. worker_threads() defaults to
// the hardware's core count; set_worker_threads() changes it process-wide (--threads). A thread
// that shares the cores with others (one of several synthesis threads) caps its own parallel_for
// calls with a ThreadShare for as long as the ThreadShare lives. parallel_find_first(n, pred)
// returns the first index whose pred holds (n if none), whatever the thread count.
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
// This thread's cap on worker_threads() (0: none).
inline size_t& thread_share_setting() {
  thread_local size_t share = 0;
  return share;
}
inline size_t worker_threads() {
  const size_t share = thread_share_setting();
  return share ? std::min(share, worker_threads_setting()) : worker_threads_setting();
}
inline void set_worker_threads(size_t threads) { worker_threads_setting() = std::max<size_t>(1, threads); }

class ThreadShare {
 public:
  explicit ThreadShare(size_t threads) : previous_(thread_share_setting()) {
    thread_share_setting() = std::max<size_t>(1, threads);
  }
  ~ThreadShare() { thread_share_setting() = previous_; }
  ThreadShare(const ThreadShare&) = delete;
  ThreadShare& operator=(const ThreadShare&) = delete;

 private:
  size_t previous_;
};

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
