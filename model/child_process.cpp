#include "child_process.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

namespace zkpipe::model {

namespace {

struct RunningChild {
  std::size_t job = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string output;
};

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    text.remove_prefix(std::size_t(written));
  }
}

RunningChild start_child(std::size_t job_index, const ChildJob& job) {
  int fds[2];
  if (::pipe(fds) != 0) throw ChildProcessError(fmt::format("pipe failed: {}", std::strerror(errno)));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw ChildProcessError(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    ::close(fds[0]);
    int status = 0;
    try {
      write_all(fds[1], job(job_index));
    } catch (const std::exception& error) {
      write_all(fds[1], error.what());
      status = 2;
    }
    ::close(fds[1]);
    ::_exit(status);
  }
  ::close(fds[1]);
  return RunningChild{job_index, pid, fds[0], {}};
}

}  // namespace

std::vector<std::string> run_in_children(std::size_t jobs, const ChildJob& job, std::size_t parallel,
                                         const ChildProgress& progress) {
  std::vector<std::string> results(jobs);
  std::vector<RunningChild> running;
  std::string first_error;
  std::size_t next = 0, done = 0;
  parallel = std::max<std::size_t>(parallel, 1);
  while (done < jobs) {
    while (running.size() < parallel && next < jobs && first_error.empty())
      running.push_back(start_child(next++, job));
    if (running.empty()) break;
    std::vector<pollfd> fds;
    for (const RunningChild& child : running) fds.push_back({child.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      throw ChildProcessError(fmt::format("poll failed: {}", std::strerror(errno)));
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      RunningChild& child = running[i];
      char buffer[1 << 16];
      const ssize_t got = ::read(child.fd, buffer, sizeof buffer);
      if (got > 0) {
        child.output.append(buffer, std::size_t(got));
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      ::close(child.fd);
      int status = 0;
      while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {}
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && first_error.empty()) {
        const std::string why = WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                                    : child.output;
        first_error = fmt::format("job {} failed: {}", child.job, why);
      }
      if (ok) results[child.job] = std::move(child.output);
      running.erase(running.begin() + std::ptrdiff_t(i));
      ++done;
      if (progress) progress(done, jobs);
    }
    if (!first_error.empty() && running.empty()) break;
  }
  if (!first_error.empty()) throw ChildProcessError(first_error);
  return results;
}

}  // namespace zkpipe::model
