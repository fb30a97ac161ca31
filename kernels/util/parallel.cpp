// The work pool behind parallel_for (parallel.hpp): worker_threads() threads, one queue of calls,
// each free thread taking the next chunk of the call with the fewest chunks running; and the
// dedicated threads of calls made outside it.
#include "kernels/util/parallel.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace zk {
namespace {

bool& dedicated_threads() {
  thread_local bool dedicated = false;
  return dedicated;
}

// The first exception the chunks of one call threw, from any thread; the other chunks still run.
class FirstError {
 public:
  void run(const std::function<void(size_t)>& chunk, size_t index) {
    try {
      chunk(index);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
};

// The caller and up to `threads` - 1 threads started for the call (whose own calls, nested, start
// threads of their own too), each taking the next chunk until none is left.
void run_on_dedicated_threads(size_t chunks, size_t threads, const std::function<void(size_t)>& chunk) {
  std::atomic<size_t> next = 0;
  FirstError error;
  auto run = [&] {
    dedicated_threads() = true;
    for (size_t c = next++; c < chunks; c = next++) error.run(chunk, c);
  };
  {
    std::vector<std::jthread> started;
    const size_t helpers = std::min(chunks, threads) - 1;
    started.reserve(helpers);
    for (size_t t = 0; t < helpers; ++t) started.emplace_back(run);
    run();
  }
  error.rethrow();
}

class WorkPool {
 public:
  ~WorkPool() { stop_threads(); }

  size_t threads() const { return wanted_.load(std::memory_order_relaxed); }
  size_t calls() {
    std::lock_guard lock(mutex_);
    return calls_.size();
  }
  // Not while a call runs: the pool's threads are made anew at the next call.
  void set_threads(size_t threads) {
    stop_threads();
    wanted_.store(std::max<size_t>(1, threads), std::memory_order_relaxed);
  }

  void run(size_t chunks, const std::function<void(size_t)>& chunk) {
    if (on_pool_thread()) {  // nested: the pool's threads may all be waiting on their own calls
      for (size_t c = 0; c < chunks; ++c) chunk(c);
      return;
    }
    Call call{chunk, chunks};
    std::unique_lock lock(mutex_);
    if (threads_.empty()) start_threads();
    const auto queued = calls_.insert(calls_.end(), &call);
    chunk_ready_.notify_all();
    call.finished.wait(lock, [&] { return call.done == call.chunks; });
    calls_.erase(queued);
    call.error.rethrow();
  }

 private:
  struct Call {
    Call(const std::function<void(size_t)>& chunk, size_t chunks) : chunk(chunk), chunks(chunks) {}
    const std::function<void(size_t)>& chunk;
    size_t chunks;
    size_t next = 0, running = 0, done = 0;
    FirstError error;
    std::condition_variable finished;
  };

  static bool& on_pool_thread() {
    thread_local bool pool_thread = false;
    return pool_thread;
  }

  // Under the mutex: the call with chunks left and the fewest running (the oldest of those), or
  // none.
  Call* fairest_call() const {
    Call* fairest = nullptr;
    for (Call* call : calls_)
      if (call->next < call->chunks && (!fairest || call->running < fairest->running)) fairest = call;
    return fairest;
  }

  void work() {
    on_pool_thread() = true;
    std::unique_lock lock(mutex_);
    while (true) {
      Call* call = nullptr;
      chunk_ready_.wait(lock, [&] { return stopping_ || (call = fairest_call()); });
      if (stopping_) return;
      const size_t index = call->next++;
      ++call->running;
      lock.unlock();
      call->error.run(call->chunk, index);
      lock.lock();
      --call->running;
      if (++call->done == call->chunks) call->finished.notify_one();
    }
  }

  // Under the mutex.
  void start_threads() {
    stopping_ = false;
    for (size_t t = 0; t < threads(); ++t) threads_.emplace_back([this] { work(); });
  }

  void stop_threads() {
    std::vector<std::thread> stopped;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      stopped.swap(threads_);
    }
    chunk_ready_.notify_all();
    for (std::thread& thread : stopped) thread.join();
  }

  std::mutex mutex_;
  std::condition_variable chunk_ready_;
  std::list<Call*> calls_;  // in the order they came
  std::vector<std::thread> threads_;
  std::atomic<size_t> wanted_{std::max(1u, std::thread::hardware_concurrency())};
  bool stopping_ = false;
};

WorkPool& pool() {
  static WorkPool pool;
  return pool;
}

}  // namespace

DedicatedThreads::DedicatedThreads() : previous_(dedicated_threads()) { dedicated_threads() = true; }
DedicatedThreads::~DedicatedThreads() { dedicated_threads() = previous_; }

size_t worker_threads() { return pool().threads(); }
void set_worker_threads(size_t threads) { pool().set_threads(threads); }

namespace detail {
void run_on_pool(size_t chunks, const std::function<void(size_t)>& chunk) {
  if (dedicated_threads()) return run_on_dedicated_threads(chunks, pool().threads(), chunk);
  pool().run(chunks, chunk);
}
size_t calls_on_the_pool() { return pool().calls(); }
}  // namespace detail

}  // namespace zk
