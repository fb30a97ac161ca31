// Contract: registers `zkpipe import cuzk LOG... -o DIR` (model/cuzk_import.hpp): a cuzk daemon's
// log lines to DIR/trace.csv, DIR/trace.json (its sidecar) and DIR/trace.perfetto.json, with a
// summary of the lines read, used and skipped by reason. A failure prints one line
// "zkpipe import cuzk: <what went wrong>" and exits 1 (CLI::RuntimeError(1)).
#pragma once

#include <CLI/CLI.hpp>

namespace zkpipe::tools {

void add_import_command(CLI::App& app);

}  // namespace zkpipe::tools
