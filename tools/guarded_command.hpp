// Contract: guarded(command, body) wraps a subcommand's body for CLI11: any exception becomes one
// line "zkpipe <command>: <what went wrong>" on stderr and exit code 1 (CLI::RuntimeError(1),
// which CLI11's app.exit turns into the exit status).
#pragma once

#include <functional>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace zkpipe::tools {

template <typename Body>
std::function<void()> guarded(std::string command, Body body) {
  return [command = std::move(command), body = std::move(body)] {
    try {
      body();
    } catch (const std::exception& error) {
      std::cerr << fmt::format("zkpipe {}: {}\n", command, error.what());
      throw CLI::RuntimeError(1);
    }
  };
}

}  // namespace zkpipe::tools
