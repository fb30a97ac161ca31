// Contract: runs jobs in forked child processes, at most `parallel` at a time, and returns what
// each child wrote (its result text) in job order. A job that throws or crashes makes
// run_in_children throw ChildProcessError with the job index and the child's message after all
// running children have ended. No shared state between jobs: each child is a fresh copy of the
// parent at fork time (which is why SimGrid runs go through it: one engine per process).
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace zkpipe::model {

struct ChildProcessError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using ChildJob = std::function<std::string(std::size_t job)>;
using ChildProgress = std::function<void(std::size_t done, std::size_t total)>;

std::vector<std::string> run_in_children(std::size_t jobs, const ChildJob& job, std::size_t parallel,
                                         const ChildProgress& progress = {});

}  // namespace zkpipe::model
