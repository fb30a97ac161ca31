// The CPU's parallel helpers: parallel_find_first gives the first hit whatever the thread count
// and chunk size, and a ThreadShare caps worker_threads() on its own thread only.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
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

TEST(Parallel, AThreadShareCapsItsOwnThreadOnly) {
  set_worker_threads(8);
  {
    const ThreadShare share(2);
    EXPECT_EQ(worker_threads(), 2u);
    size_t other_thread = 0;
    std::thread([&] { other_thread = worker_threads(); }).join();
    EXPECT_EQ(other_thread, 8u);
    const ThreadShare wider(32);  // a share never exceeds the process-wide setting
    EXPECT_EQ(worker_threads(), 8u);
  }
  EXPECT_EQ(worker_threads(), 8u);
  set_worker_threads(std::thread::hardware_concurrency());
}

}  // namespace
}  // namespace zk
