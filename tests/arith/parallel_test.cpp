// The CPU's parallel helpers: parallel_find_first gives the first hit whatever the thread count
// and chunk size, parallel_blocks cuts work into blocks no smaller than asked, and a CoreShare splits worker_threads() between the threads holding it now.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <semaphore>
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

TEST(Parallel, ACoreShareSplitsTheCoresBetweenItsHoldersNow) {
  set_worker_threads(8);
  CoreShare share(8);
  {
    const CoreShare::Hold alone(share);
    EXPECT_EQ(worker_threads(), 8u);  // the only holder has every core
    size_t other_thread = 0, other_holding = 0;
    std::thread([&] {
      other_thread = worker_threads();  // no hold: the process-wide setting
      const CoreShare::Hold second(share);
      other_holding = worker_threads();
    }).join();
    EXPECT_EQ(other_thread, 8u);
    EXPECT_EQ(other_holding, 4u);
    EXPECT_EQ(worker_threads(), 8u);  // the second holder has gone
    std::vector<std::jthread> holders;  // 15 more holders, each until the block ends
    for (size_t more = 1; more <= 15; ++more) {
      std::binary_semaphore held(0);
      holders.emplace_back([&](std::stop_token stop) {
        const CoreShare::Hold hold(share);
        held.release();
        while (!stop.stop_requested()) std::this_thread::yield();
      });
      held.acquire();
      EXPECT_EQ(share.holders(), more + 1);
      EXPECT_EQ(worker_threads(), std::max<size_t>(1, 8 / (more + 1)));  // never below one core
    }
  }
  EXPECT_EQ(share.holders(), 0u);
  EXPECT_EQ(worker_threads(), 8u);
  set_worker_threads(std::thread::hardware_concurrency());
}

}  // namespace
}  // namespace zk
