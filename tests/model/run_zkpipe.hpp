// Contract: run_zkpipe(ARGS) runs `zkpipe ARGS...` in this process with the model's commands (as
// tools/zkpipe.cpp registers them, `import` among them) and returns the exit code.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model_commands.hpp"

namespace zkpipe::model::testing {

inline int run_zkpipe(const std::vector<std::string>& args) {
  CLI::App app{"zkpipe"};
  app.require_subcommand(1);
  tools::add_model_commands(app);
  std::vector<const char*> argv{"zkpipe"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(int(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return 0;
}

}  // namespace zkpipe::model::testing
