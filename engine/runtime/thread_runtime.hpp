// Contract: ThreadRuntime runs the Pipeline (runtime/pipeline.hpp) on operating-system threads
// and the steady clock: the engine's runtime. Each actor is a thread; the pipeline's state is
// guarded by a std::mutex; WaitQueue keeps its waiters in FIFO order, so notify_one wakes the
// longest waiter, and no other, and says whether there was one; a GPU's compute section is a
// std::mutex. Daemons (scheduled faults) sleep until their time or until every actor has ended,
// whichever comes first. Times are seconds since `origin`. run() may be called once; thread-safe
// otherwise.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace zkpipe::runtime {

class ThreadRuntime {
 public:
  using Clock = std::chrono::steady_clock;
  using Mutex = std::mutex;
  using Section = std::mutex;

  class WaitQueue {
   public:
    void wait(std::unique_lock<std::mutex>& lock) {
      Waiter waiter;
      waiters_.push_back(&waiter);
      waiter.changed.wait(lock, [&] { return waiter.woken; });
    }
    bool notify_one() {
      if (waiters_.empty()) return false;
      wake(*waiters_.front());
      waiters_.pop_front();
      return true;
    }
    void notify_all() {
      for (Waiter* waiter : waiters_) wake(*waiter);
      waiters_.clear();
    }

   private:
    // Each waiter sleeps on its own condition variable, so that waking one wakes no other.
    struct Waiter {
      std::condition_variable changed;
      bool woken = false;
    };
    static void wake(Waiter& waiter) {
      waiter.woken = true;
      waiter.changed.notify_one();
    }
    std::deque<Waiter*> waiters_;  // longest waiting first
  };

  explicit ThreadRuntime(Clock::time_point origin) : origin_(origin) {}

  double now_s() const { return std::chrono::duration<double>(Clock::now() - origin_).count(); }

  // Returns early, by throwing Stopped (which daemons let escape), once every actor has ended.
  void sleep_until(double s) {
    std::unique_lock lock(stop_mutex_);
    const auto until = origin_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    if (stopped_changed_.wait_until(lock, until, [&] { return stopped_; })) throw Stopped{};
  }

  void run(std::vector<std::function<void()>> actors, std::vector<std::function<void()>> daemons) {
    std::vector<std::thread> daemon_threads;
    for (auto& daemon : daemons)
      daemon_threads.emplace_back([daemon = std::move(daemon)] {
        try {
          daemon();
        } catch (const Stopped&) {
        }
      });
    {
      std::vector<std::jthread> actor_threads;
      for (auto& actor : actors) actor_threads.emplace_back(std::move(actor));
    }
    {
      std::lock_guard lock(stop_mutex_);
      stopped_ = true;
    }
    stopped_changed_.notify_all();
    for (std::thread& daemon : daemon_threads) daemon.join();
  }

 private:
  struct Stopped {};  // not a std::exception: no actor's handler catches it

  Clock::time_point origin_;
  std::mutex stop_mutex_;
  std::condition_variable stopped_changed_;
  bool stopped_ = false;
};

}  // namespace zkpipe::runtime
