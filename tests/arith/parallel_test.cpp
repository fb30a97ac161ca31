// The CPU's parallel helpers: parallel_find_first gives the first hit whatever the thread count
// and chunk size, parallel_blocks cuts work into blocks no smaller than asked, and the work pool
// runs every chunk once, no more than worker_threads() at a time however many threads call, lets
// free threads take a held thread's chunks, shares its threads between concurrent calls, leaves
// calls on dedicated threads out of it, runs nested calls inline and rethrows a chunk's exception.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/util/parallel.hpp"

namespace zk {
namespace {

RC_GTEST_PROP(Parallel, FindFirstIsTheFirstHitOnAnyThreadCount, (const std::vector<bool>& hits)) {
  const auto threads = *rc::gen::inRange<size_t>(1, 17);
  const auto min_chunk = *rc::gen::inRange<size_t>(1, 9);
  set_worker_threads(threads);
  const size_t expected = size_t(std::ranges::find(hits, true) - hits.begin());
  const size_t found = parallel_find_first(hits.size(), [&](size_t i) { return bool(hits[i]); }, min_chunk);
  set_worker_threads(std::thread::hardware_concurrency());
  RC_ASSERT(found == expected);
}

RC_GTEST_PROP(Parallel, BlocksAreAsManyAsChunksAtMostAndNoneSmallerThanAsked, ()) {
  const auto threads = *rc::gen::inRange<size_t>(1, 65);
  const auto n = *rc::gen::inRange<size_t>(0, 1'000'000);
  const auto least = *rc::gen::inRange<size_t>(1, 70'000);
  set_worker_threads(threads);
  const size_t blocks = parallel_blocks(n, least);
  set_worker_threads(std::thread::hardware_concurrency());
  RC_ASSERT(blocks >= 1);
  RC_ASSERT(blocks <= chunks_per_thread * threads);
  RC_ASSERT(blocks == 1 || n / blocks >= least);  // the smallest block, n / blocks rounded down
  RC_ASSERT(blocks == chunks_per_thread * threads || n / (blocks + 1) < least);  // one more would be too small
}

// Eight threads call at once on a pool of four: every index runs exactly once and at most four
// chunks run at any moment.
TEST(Parallel, ConcurrentCallsShareThePoolAndRunEachChunkOnce) {
  set_worker_threads(4);
  constexpr size_t kCallers = 8, kItems = 20'000;
  std::vector<std::vector<std::atomic<int>>> runs(kCallers);
  for (auto& counts : runs) counts = std::vector<std::atomic<int>>(kItems);
  std::atomic<size_t> running = 0, most_running = 0;
  {
    std::vector<std::jthread> callers;
    for (size_t caller = 0; caller < kCallers; ++caller)
      callers.emplace_back([&, caller] {
        parallel_for(kItems, [&](size_t begin, size_t end) {
          const size_t now = ++running;
          size_t seen = most_running.load();
          while (now > seen && !most_running.compare_exchange_weak(seen, now)) {
          }
          for (size_t i = begin; i < end; ++i) ++runs[caller][i];
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          --running;
        });
      });
  }
  set_worker_threads(std::thread::hardware_concurrency());
  for (size_t caller = 0; caller < kCallers; ++caller)
    for (size_t i = 0; i < kItems; ++i) ASSERT_EQ(runs[caller][i].load(), 1) << "caller " << caller << ", item " << i;
  EXPECT_LE(most_running.load(), 4u);
}

// With two threads, a call whose first chunk waits until three quarters of its items are done
// (its core taken by other work) ends: the other thread takes every chunk but that one. With one
// chunk a thread, it would wait for ever. On the pool and on dedicated threads.
void expect_a_held_chunk_holds_back_only_its_own_items() {
  set_worker_threads(2);
  constexpr size_t kItems = 1000;
  std::mutex mutex;
  std::condition_variable changed;
  size_t done = 0;
  bool held_chunk_saw_the_rest = true;
  parallel_for(kItems, [&](size_t begin, size_t end) {
    std::unique_lock lock(mutex);
    if (begin == 0)
      held_chunk_saw_the_rest =
          changed.wait_for(lock, std::chrono::seconds(10), [&] { return 4 * done >= 3 * kItems; });
    done += end - begin;
    changed.notify_all();
  });
  set_worker_threads(std::thread::hardware_concurrency());
  EXPECT_TRUE(held_chunk_saw_the_rest) << "the other thread did " << done << " items of " << kItems;
  EXPECT_EQ(done, kItems);
}

TEST(Parallel, AHeldChunkHoldsBackOnlyItsOwnItems) {
  expect_a_held_chunk_holds_back_only_its_own_items();
  const DedicatedThreads scope;
  expect_a_held_chunk_holds_back_only_its_own_items();
}

// A pool of `threads` threads kept busy by a call whose chunks wait at a gate until open() is
// called (open() also runs at the end of the scope, so that a failing test does not hang).
class BusyPool {
 public:
  explicit BusyPool(size_t threads) : caller_([this, threads] {
    parallel_for(threads, [this](size_t, size_t) {
      std::unique_lock lock(mutex_);
      ++waiting_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return open_; });
    });
  }) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ == threads; });
  }
  ~BusyPool() { open(); }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  size_t waiting_ = 0;
  bool open_ = false;
  std::jthread caller_;  // last: joined first, after open()
};

// Two calls queued behind a busy pool of two threads take turns: the two threads that come free
// start one chunk of each (the call with fewer chunks running goes next), where first come, first
// served would start both of b's. Each chunk waits until two have started, so that no thread can
// finish a chunk and take another before the second thread has chosen.
TEST(Parallel, QueuedCallsTakeTurns) {
  set_worker_threads(2);
  std::mutex mutex;
  std::condition_variable two_started;
  std::string order;
  auto chunk_of = [&](char call) {
    return [&, call](size_t, size_t) {
      std::unique_lock lock(mutex);
      order += call;
      two_started.notify_all();
      two_started.wait(lock, [&] { return order.size() >= 2; });
    };
  };
  {
    BusyPool busy(2);
    std::jthread b([&] { parallel_for(2, chunk_of('b')); });
    while (detail::calls_on_the_pool() < 2) std::this_thread::yield();
    std::jthread c([&] { parallel_for(2, chunk_of('c')); });
    while (detail::calls_on_the_pool() < 3) std::this_thread::yield();
    busy.open();
  }
  set_worker_threads(std::thread::hardware_concurrency());
  ASSERT_EQ(order.size(), 4u);
  std::string first_two = order.substr(0, 2);
  std::ranges::sort(first_two);
  EXPECT_EQ(first_two, "bc") << order;
}

// A call under DedicatedThreads does not queue behind a busy pool: it ends while every pool
// thread is still held.
TEST(Parallel, ACallOnDedicatedThreadsDoesNotWaitForThePool) {
  set_worker_threads(2);
  {
    BusyPool busy(2);
    auto dedicated = std::async(std::launch::async, [] {
      const DedicatedThreads scope;
      std::atomic<size_t> items = 0;
      parallel_for(100, [&](size_t begin, size_t end) { items += end - begin; });
      return items.load();
    });
    ASSERT_EQ(dedicated.wait_for(std::chrono::seconds(60)), std::future_status::ready)
        << "the call waited for the busy pool";
    EXPECT_EQ(dedicated.get(), 100u);
  }
  set_worker_threads(std::thread::hardware_concurrency());
}

TEST(Parallel, ANestedCallRunsInlineAndAChunksExceptionReachesTheCaller) {
  set_worker_threads(3);
  std::atomic<size_t> inner = 0;
  parallel_for(6, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) parallel_for(100, [&](size_t b, size_t e) { inner += e - b; });
  });
  EXPECT_EQ(inner.load(), 600u);
  EXPECT_THROW(parallel_for(50, [](size_t begin, size_t) {
                 if (begin > 0) throw std::runtime_error("chunk failed");
               }),
               std::runtime_error);
  set_worker_threads(std::thread::hardware_concurrency());
}

}  // namespace
}  // namespace zk
