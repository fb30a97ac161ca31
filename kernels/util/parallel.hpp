// parallel.hpp — the CPU's one way to spread work over cores.
//
// parallel_for(n, fn) calls fn(begin, end) on disjoint contiguous chunks covering [0, n), at most
// most_chunks() (chunks_per_thread * worker_threads()) of them, and returns when all are done; an
// exception thrown by any chunk is rethrown in the caller. The chunks run on the process's one
// work pool of worker_threads() threads (the hardware's core count by default;
// set_worker_threads() changes it process-wide, --threads, while no call runs), not on the
// caller's thread (unless the work is one chunk), so that however many threads call at once, no
// more than worker_threads() chunks run.
// A free thread takes the next chunk, so a core that other work slows (another call's dedicated
// threads, a copy from pageable memory) holds back a few chunks, not a fixed share of the call.
// The pool is work-conserving and fair: a free pool thread takes the next chunk of the call with
// the fewest chunks running, so n concurrent calls (n syntheses) share the cores about equally
// while all of them have chunks left, a call's chunks go to more threads as the others end, and a
// call alone takes every core. A call made under a DedicatedThreads scope (the GPU workers' host
// work, on the GPU's critical path) runs on the caller and up to worker_threads() - 1 threads
// started for it beside the pool, which take its chunks the same way, so that it never waits for
// other calls' chunks. A call from a pool thread (a nested parallel_for) runs its chunks inline.
// parallel_find_first(n, pred) returns the first index whose pred holds (n if none), whatever
// the thread count. parallel_blocks(n, least) is how many blocks to cut n items into for a
// parallel_for over blocks whose partial results are combined in block order.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>

namespace zk {

size_t worker_threads();
void set_worker_threads(size_t threads);

// Chunks a call is cut into per thread at most: enough that the threads which finish first take
// the chunks of a slowed one, few enough that a chunk's fixed costs stay small.
inline constexpr size_t chunks_per_thread = 4;
// The most chunks a call is cut into.
inline size_t most_chunks() { return chunks_per_thread * worker_threads(); }

// While it lives, this thread's parallel_for calls run on threads of their own, not the pool's.
class DedicatedThreads {
 public:
  DedicatedThreads();
  ~DedicatedThreads();
  DedicatedThreads(const DedicatedThreads&) = delete;
  DedicatedThreads& operator=(const DedicatedThreads&) = delete;

 private:
  bool previous_;
};

namespace detail {
// Runs chunk(0), ..., chunk(chunks - 1) on the work pool (or on dedicated threads) and waits for
// them; rethrows the first exception a chunk threw.
void run_on_pool(size_t chunks, const std::function<void(size_t)>& chunk);
// The calls on the pool now, running or waiting (for tests).
size_t calls_on_the_pool();
}  // namespace detail

template <class Fn>
void parallel_for(size_t n, Fn&& fn, size_t min_chunk = 1) {
  const size_t chunks = std::min(most_chunks(), (n + min_chunk - 1) / std::max<size_t>(min_chunk, 1));
  if (chunks <= 1) {
    if (n) fn(size_t{0}, n);
    return;
  }
  detail::run_on_pool(chunks, [&](size_t c) { fn(n * c / chunks, n * (c + 1) / chunks); });
}

// As many blocks as parallel_for makes chunks at most, none smaller than `least` items, never
// none: block b of B then covers items [n * b / B, n * (b + 1) / B).
inline size_t parallel_blocks(size_t n, size_t least) {
  return std::max<size_t>(1, std::min(most_chunks(), n / std::max<size_t>(least, 1)));
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
