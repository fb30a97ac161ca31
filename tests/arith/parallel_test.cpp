// The CPU's parallel helpers: parallel_find_first gives the first hit whatever the thread count
// and chunk size, parallel_blocks cuts work into blocks no smaller than asked, and the work pool
// runs every chunk once, no more than worker_threads() at a time however many threads call, shares
// its threads between concurrent calls, leaves calls on dedicated threads out of it, runs nested
// calls inline and rethrows a chunk's exception.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
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

RC_GTEST_PROP(Parallel, BlocksAreOnePerCoreAtMostAndNoneSmallerThanAsked, ()) {
  const auto threads = *rc::gen::inRange<size_t>(1, 65);
  const auto n = *rc::gen::inRange<size_t>(0, 1'000'000);
  const auto least = *rc::gen::inRange<size_t>(1, 70'000);
  set_worker_threads(threads);
  const size_t blocks = parallel_blocks(n, least);
  set_worker_threads(std::thread::hardware_concurrency());
  RC_ASSERT(blocks >= 1);
  RC_ASSERT(blocks <= threads);
  RC_ASSERT(blocks == 1 || n / blocks >= least);  // the smallest block, n / blocks rounded down
  RC_ASSERT(blocks == threads || n / (blocks + 1) < least);  // one more would be too small
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
  EXPECT_GE(most_running.load(), 2u) << "the pool's threads never ran two chunks at once";
}

// The order in which chunks of several calls start, on a pool kept busy by a first call: each
// later call (launched in order, `dedicated` ones under DedicatedThreads) starts while the first
// one's chunks still sleep, so that all the pool's are queued when its threads come free.
struct ChunkStarts {
  std::mutex mutex;
  std::vector<char> order;  // the call's letter, one a chunk started
  void add(char call) {
    std::lock_guard lock(mutex);
    order.push_back(call);
  }
};

void start_calls_behind_a_busy_pool(size_t threads, std::vector<std::pair<char, bool>> calls, ChunkStarts& starts) {
  set_worker_threads(threads);
  std::atomic<bool> busy = false;
  {
    std::vector<std::jthread> callers;
    callers.emplace_back([&] {
      parallel_for(threads, [&](size_t, size_t) {
        busy = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      });
    });
    while (!busy) std::this_thread::yield();
    for (const auto& [letter, dedicated] : calls) {
      callers.emplace_back([&starts, threads, letter, dedicated] {
        std::optional<DedicatedThreads> scope;
        if (dedicated) scope.emplace();
        parallel_for(threads, [&](size_t, size_t) {
          starts.add(letter);
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        });
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
    }
  }
  set_worker_threads(std::thread::hardware_concurrency());
}

// Two calls queued behind a busy pool of two threads take turns: the two threads that come free
// start one chunk of each (the call with fewer chunks running goes next), where first come, first
// served would start both of b's.
TEST(Parallel, QueuedCallsTakeTurns) {
  ChunkStarts starts;
  start_calls_behind_a_busy_pool(2, {{'b', false}, {'c', false}}, starts);
  ASSERT_EQ(starts.order.size(), 4u);
  std::string first_two(starts.order.begin(), starts.order.begin() + 2);
  std::ranges::sort(first_two);
  EXPECT_EQ(first_two, "bc") << std::string(starts.order.begin(), starts.order.end());
}

// A call under DedicatedThreads does not queue behind a busy pool: it ends while the pool's
// chunks still run.
TEST(Parallel, ACallOnDedicatedThreadsDoesNotWaitForThePool) {
  ChunkStarts starts;
  start_calls_behind_a_busy_pool(3, {{'b', false}, {'d', true}}, starts);
  EXPECT_EQ(std::string(starts.order.begin(), starts.order.end()), "dddbbb");
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
