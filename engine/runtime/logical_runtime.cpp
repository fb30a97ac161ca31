#include "runtime/logical_runtime.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "util/splitmix64.hpp"

namespace zkpipe::runtime {

LogicalRuntime::Actor*& LogicalRuntime::current() {
  thread_local Actor* actor = nullptr;
  return actor;
}

void LogicalRuntime::WaitQueue::wait() {
  Actor* self = current();
  waiters_.push_back(self);
  self->runtime->block();
}

bool LogicalRuntime::WaitQueue::notify_one() {
  if (waiters_.empty()) return false;
  Actor* next = waiters_.front();
  waiters_.pop_front();
  next->runtime->make_ready(next);
  return true;
}

void LogicalRuntime::WaitQueue::notify_all() {
  std::deque<Actor*> waking;
  waking.swap(waiters_);
  for (Actor* actor : waking) actor->runtime->make_ready(actor);
}

void LogicalRuntime::sleep_until(double s) {
  Actor* self = current();
  sleepers_.emplace(std::max(s, now_s_), sleeps_++, self);
  block();
}

void LogicalRuntime::make_ready(Actor* actor) { ready_.push_back(actor); }

void LogicalRuntime::block() {
  Actor* self = current();
  std::unique_lock lock(baton_mutex_);
  self->has_baton = false;
  baton_returned_.notify_one();
  self->baton_changed.wait(lock, [&] { return self->has_baton; });
  if (self->cancelled) throw Cancelled{};
}

void LogicalRuntime::main_of(Actor& actor) {
  current() = &actor;
  {
    std::unique_lock lock(baton_mutex_);
    actor.baton_changed.wait(lock, [&] { return actor.has_baton; });
  }
  try {
    if (!actor.cancelled) actor.body();
  } catch (const Cancelled&) {
  } catch (...) {
    if (!escaped_) escaped_ = std::current_exception();
  }
  std::lock_guard lock(baton_mutex_);
  actor.ended = true;
  actor.has_baton = false;
  baton_returned_.notify_one();
}

void LogicalRuntime::hand_baton_to(Actor& actor) {
  std::unique_lock lock(baton_mutex_);
  actor.has_baton = true;
  actor.baton_changed.notify_one();
  baton_returned_.wait(lock, [&] { return !actor.has_baton; });
}

void LogicalRuntime::wake_earliest_sleepers() {
  const double wake_s = std::get<0>(sleepers_.top());
  now_s_ = wake_s;
  do {
    ready_.push_back(std::get<2>(sleepers_.top()));
    sleepers_.pop();
  } while (tie_seed_ != 0 && !sleepers_.empty() && std::get<0>(sleepers_.top()) == wake_s);
}

LogicalRuntime::Actor* LogicalRuntime::take_next_ready() {
  std::size_t index = 0;
  if (tie_seed_ != 0) index = std::size_t(zk::keyed_draw(tie_seed_, {switches_++}) * double(ready_.size()));
  Actor* next = ready_[index];
  ready_.erase(ready_.begin() + std::ptrdiff_t(index));
  return next;
}

void LogicalRuntime::run(std::vector<std::function<void()>> actors, std::vector<std::function<void()>> daemons) {
  actors_.clear();
  ready_.clear();
  sleepers_ = {};
  now_s_ = 0;
  switches_ = 0;
  escaped_ = nullptr;
  auto add = [&](std::function<void()>& body, bool daemon) {
    auto actor = std::make_unique<Actor>();
    actor->runtime = this;
    actor->body = std::move(body);
    actor->daemon = daemon;
    ready_.push_back(actor.get());
    actors_.push_back(std::move(actor));
  };
  for (auto& body : actors) add(body, false);
  for (auto& body : daemons) add(body, true);
  for (auto& actor : actors_) actor->thread = std::thread([this, a = actor.get()] { main_of(*a); });

  auto actors_alive = [&] {
    return std::ranges::count_if(actors_, [](const auto& actor) { return !actor->daemon && !actor->ended; });
  };
  std::string deadlock;
  while (actors_alive() > 0) {
    if (ready_.empty()) {
      if (sleepers_.empty()) {
        deadlock = fmt::format("logical runtime: {} actor(s) wait at t = {} s and nothing can wake them", actors_alive(), now_s_);
        break;
      }
      wake_earliest_sleepers();
    }
    hand_baton_to(*take_next_ready());
  }
  for (auto& actor : actors_) {  // the rest wait or sleep for ever: unwind them
    if (actor->ended) continue;
    actor->cancelled = true;
    hand_baton_to(*actor);
  }
  for (auto& actor : actors_) actor->thread.join();
  actors_.clear();
  if (escaped_) std::rethrow_exception(escaped_);
  if (!deadlock.empty()) throw Deadlock(deadlock);
}

}  // namespace zkpipe::runtime
