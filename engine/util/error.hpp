// error.hpp — the one error type of zkpipe's library code. Every failure the user can cause
// (bad file, bad size, bad setting) throws zk::Error with a message that says what went wrong,
// where (file, offset, key), and what to do. The command line's main() is the one place that turns
// it into a single "zkpipe: error: ..." line and a non-zero exit status.
#pragma once
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace zk {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace zk
