// Contract: reads and writes the shared trace schema as CSV with the header (version 2)
//   run,source,partition,phase,resource,start_s,end_s,bytes,items,attempt,worker
// attempt and worker are empty where unknown (worker: a synthesis thread's span). Version 1 files,
// without the last two columns, read as spans whose attempt and worker are unknown. Writing is
// deterministic (fixed nine-decimal seconds), so equal traces give equal bytes.
// Reading uses libfccp's CSV parser; lines starting with '#' are comments. Bad input throws
// TraceError whose message names the file, the line and the column at fault.
#pragma once

#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "trace.hpp"

namespace zkpipe::trace {

struct TraceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr std::string_view csv_header =
    "run,source,partition,phase,resource,start_s,end_s,bytes,items,attempt,worker";

void write_csv(std::ostream& out, std::span<const Span> spans);
void write_csv_file(const std::filesystem::path& path, std::span<const Span> spans);
std::string to_csv(std::span<const Span> spans);

Trace read_csv_file(const std::filesystem::path& path);
// `origin` names the text in error messages (a file name, "child process").
Trace read_csv_text(std::string_view origin, std::string_view text);

}  // namespace zkpipe::trace
