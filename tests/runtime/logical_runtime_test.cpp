// Tests of LogicalRuntime: time passes only through sleeps, sleepers wake in time order (ties in
// the order they fell asleep), waits and sections are FIFO, a job that can never end is reported,
// daemons are cancelled when the actors end, and an actor's exception reaches the caller. With a
// tie seed, the actors that act at one instant (started together, or waking at one time) act in
// orders drawn from it: the same order for the same seed, other orders for others, time order kept.
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/logical_runtime.hpp"

namespace zkpipe::runtime {
namespace {

TEST(LogicalRuntime, SleepersWakeInTimeOrderTiesInTheOrderTheyFellAsleep) {
  LogicalRuntime logical;
  std::vector<std::string> woke;
  auto sleeper = [&](std::string name, double s) {
    return [&, name, s] {
      logical.sleep_until(s);
      woke.push_back(name + "@" + std::to_string(int(logical.now_s())));
    };
  };
  logical.run({sleeper("a", 3), sleeper("b", 1), sleeper("c", 3), sleeper("d", 2)}, {});
  EXPECT_EQ(woke, (std::vector<std::string>{"b@1", "d@2", "a@3", "c@3"}));
  EXPECT_EQ(logical.now_s(), 3);
}

// The order in which four actors started together, then four sleepers woken together at t = 1,
// first act, under `tie_seed`; the sleepers' records carry the time they woke.
std::vector<std::string> tie_order(std::uint64_t tie_seed) {
  LogicalRuntime logical(tie_seed);
  std::vector<std::string> acted;
  std::vector<std::function<void()>> actors;
  for (const std::string name : {"a", "b", "c", "d"})
    actors.push_back([&, name] { acted.push_back(name); });
  for (const std::string name : {"e", "f", "g", "h"})
    actors.push_back([&, name] {
      logical.sleep_until(1);
      acted.push_back(name + "@" + std::to_string(int(logical.now_s())));
    });
  logical.run(std::move(actors), {});
  return acted;
}

TEST(LogicalRuntime, ATieSeedDrawsTheOrderOfActorsActingAtOneInstant) {
  const std::vector<std::string> fifo = tie_order(0);
  EXPECT_EQ(fifo, (std::vector<std::string>{"a", "b", "c", "d", "e@1", "f@1", "g@1", "h@1"}));
  std::set<std::vector<std::string>> orders;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<std::string> order = tie_order(seed);
    EXPECT_EQ(tie_order(seed), order) << "seed " << seed << " replays its order";
    const std::set<std::string> started(order.begin(), order.begin() + 4);
    EXPECT_EQ(started, (std::set<std::string>{"a", "b", "c", "d"})) << "seed " << seed << ": t = 0 before t = 1";
    orders.insert(order);
  }
  EXPECT_GT(orders.size(), 10u) << "twenty seeds, few orders";
}

TEST(LogicalRuntime, NotifyOneWakesTheLongestWaiterAndSaysWhenNoneWaits) {
  LogicalRuntime logical;
  LogicalRuntime::WaitQueue queue;
  LogicalRuntime::Mutex mutex;
  std::unique_lock lock(mutex);
  std::vector<int> woke;
  bool notified_nobody = false;
  auto waiter = [&](int id) {
    return [&, id] {
      queue.wait(lock);
      woke.push_back(id);
    };
  };
  logical.run({waiter(1), waiter(2), waiter(3),
               [&] {
                 logical.sleep_for(1);
                 EXPECT_TRUE(queue.notify_one());
                 logical.sleep_for(1);
                 queue.notify_all();
                 logical.sleep_for(1);
                 notified_nobody = !queue.notify_one();
               }},
              {});
  EXPECT_EQ(woke, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(notified_nobody);
}

TEST(LogicalRuntime, SectionsAreExclusiveAndHandedOverInArrivalOrder) {
  LogicalRuntime logical;
  LogicalRuntime::Section section;
  std::vector<std::pair<int, double>> entered;
  int inside = 0, most_inside = 0;
  auto user = [&](int id, double arrive_s) {
    return [&, id, arrive_s] {
      logical.sleep_until(arrive_s);
      std::lock_guard held(section);
      most_inside = std::max(most_inside, ++inside);
      entered.emplace_back(id, logical.now_s());
      logical.sleep_for(10);
      --inside;
    };
  };
  logical.run({user(1, 0), user(2, 3), user(3, 1)}, {});
  EXPECT_EQ(most_inside, 1);
  EXPECT_EQ(entered, (std::vector<std::pair<int, double>>{{1, 0}, {3, 10}, {2, 20}}));
}

TEST(LogicalRuntime, AJobThatCanNeverEndIsReportedAsADeadlock) {
  LogicalRuntime logical;
  LogicalRuntime::WaitQueue never_notified;
  try {
    logical.run({[&] { never_notified.wait(); }, [&] { logical.sleep_for(2); }}, {});
    FAIL() << "expected a deadlock";
  } catch (const LogicalRuntime::Deadlock& deadlock) {
    EXPECT_NE(std::string(deadlock.what()).find("1 actor(s) wait at t = 2 s"), std::string::npos) << deadlock.what();
  }
}

TEST(LogicalRuntime, DaemonsStillAsleepAreCancelledWhenTheActorsEnd) {
  LogicalRuntime logical;
  bool daemon_woke = false;
  logical.run({[&] { logical.sleep_for(1); }}, {[&] {
                logical.sleep_for(5);
                daemon_woke = true;
              }});
  EXPECT_FALSE(daemon_woke);
  EXPECT_EQ(logical.now_s(), 1);
}

TEST(LogicalRuntime, AnExceptionAnActorLetsEscapeReachesTheCaller) {
  LogicalRuntime logical;
  LogicalRuntime::WaitQueue queue;
  EXPECT_THROW(logical.run({[&] { queue.wait(); },
                            [&] {
                              logical.sleep_for(1);
                              throw std::runtime_error("broken");
                            }},
                           {}),
               std::runtime_error);
}

}  // namespace
}  // namespace zkpipe::runtime
