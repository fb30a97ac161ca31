// Contract: registers `zkpipe soak` on the command line: runs the property suite's generated
// cases (tests/properties/soak.hpp) in parallel processes, as many as asked, and prints cases,
// faults injected and violations, each violation with its seed and the RC_PARAMS reproduce
// string that replays it. Exit status 1 when a property was violated or the run failed (one
// "zkpipe soak: ..." line on stderr for the latter).
#pragma once

#include <CLI/CLI.hpp>

namespace zkpipe::tools {

void add_soak_command(CLI::App& app);

}  // namespace zkpipe::tools
