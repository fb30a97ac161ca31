// Contract: registers the model's subcommands on the zkpipe command line:
//   simulate SCENARIO   one simulation: summary, trace CSV + sidecar, Chrome trace
//   sweep SCENARIO      every [sweep] point in its own process, in parallel, to a CSV table
//   calibrate TRACE...  least-squares fits (and/or an H2D benchmark CSV) to a calibration TOML
//   compare MEASURED SIMULATED   error per summary metric
//   report TRACE        an HTML page with SVG charts
//   validate --traces DIR   calibrate on some measured runs, predict the rest, table of errors
//   import cuzk LOG... -o DIR   a cuzk daemon's logs as a measured trace (tools/import_command.hpp)
// A failing command prints one line "zkpipe <command>: <what went wrong>" to stderr and exits 1
// (it throws CLI::RuntimeError(1), which CLI11's app.exit turns into the exit code).
#pragma once

#include <CLI/CLI.hpp>

namespace zkpipe::tools {

void add_model_commands(CLI::App& app);

}  // namespace zkpipe::tools
