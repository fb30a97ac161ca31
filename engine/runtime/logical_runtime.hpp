// Contract: LogicalRuntime runs the Pipeline (runtime/pipeline.hpp) in deterministic logical time:
// the property tests' runtime. Actors run one at a time, each on a thread of its own that holds
// the baton until it blocks (waits, sleeps, takes a busy section or ends); the next is the first
// of a FIFO ready queue; when none is ready the clock jumps to the earliest sleeper (ties in the
// order they fell asleep). So one scenario always gives the same interleaving, whatever the
// machine, and time passes only through sleep_until and what is built on it. With a tie seed the
// actors that could act at the same instant act in an order drawn from it instead: at each
// switch the next is drawn among the ready ones, and sleepers that wake at one instant all become
// ready together. Any such order is one threads could take, so the property tests explore them;
// a seed replays its order.
//
// run() returns when every actor has ended, daemons still asleep being cancelled; if every
// remaining actor waits and none sleeps, the job can never end and run() throws Deadlock naming
// how many wait. It rethrows the first exception an actor let escape. The Mutex is a no-op (one
// actor runs at a time); WaitQueue and Section are FIFO. A runtime serves one run() at a time;
// WaitQueue, Section and sleep_until may be used only from its actors.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "runtime/fifo_semaphore.hpp"

namespace zkpipe::runtime {

class LogicalRuntime {
  struct Actor;

 public:
  struct Deadlock : std::logic_error {
    using std::logic_error::logic_error;
  };

  // One actor runs at a time, and it switches only where it blocks.
  struct Mutex {
    void lock() {}
    void unlock() {}
  };

  class WaitQueue {
   public:
    template <class Lock>
    void wait(Lock&) {
      wait();
    }
    void wait();
    bool notify_one();
    void notify_all();

   private:
    std::deque<Actor*> waiters_;
  };

  // A FIFO lock: an unlock hands the section to the longest waiter.
  struct Section : FifoSemaphore<WaitQueue> {
    Section() : FifoSemaphore<WaitQueue>(1) {}
  };

  // tie_seed 0: the FIFO order above; any other: orders drawn from it.
  explicit LogicalRuntime(std::uint64_t tie_seed = 0) : tie_seed_(tie_seed) {}

  double now_s() const { return now_s_; }
  void sleep_until(double s);
  void sleep_for(double s) { sleep_until(now_s_ + s); }
  void run(std::vector<std::function<void()>> actors, std::vector<std::function<void()>> daemons);

 private:
  struct Actor {
    LogicalRuntime* runtime = nullptr;
    std::function<void()> body;
    bool daemon = false;
    bool has_baton = false;
    bool ended = false;
    bool cancelled = false;
    std::condition_variable baton_changed;
    std::thread thread;
  };
  struct Cancelled {};  // not a std::exception: it unwinds an actor whose run was cancelled

  static Actor*& current();
  void main_of(Actor& actor);
  void block();                 // from the running actor: hands the baton back until made ready
  void make_ready(Actor* actor);
  void hand_baton_to(Actor& actor);  // from run(): returns when the actor blocks or ends
  void wake_earliest_sleepers();      // from run(), none ready: the clock jumps to them
  Actor* take_next_ready();

  std::mutex baton_mutex_;
  std::condition_variable baton_returned_;
  std::vector<std::unique_ptr<Actor>> actors_;
  std::deque<Actor*> ready_;
  using Sleeper = std::tuple<double, std::uint64_t, Actor*>;  // wake time, order fallen asleep
  std::priority_queue<Sleeper, std::vector<Sleeper>, std::greater<>> sleepers_;
  std::uint64_t sleeps_ = 0;
  std::uint64_t tie_seed_ = 0;
  std::uint64_t switches_ = 0;  // the draws' key
  double now_s_ = 0;
  std::exception_ptr escaped_;
};

}  // namespace zkpipe::runtime
