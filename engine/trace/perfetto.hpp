// Contract: exports a trace as Chrome trace-event JSON, which ui.perfetto.dev and
// chrome://tracing open: one process per device (cpu, pcie0, gpu0 ...), one thread per resource,
// one complete ("X") event per span, named by phase, with partition, bytes and items as args.
#pragma once

#include <filesystem>
#include <span>

#include <nlohmann/json.hpp>

#include "trace.hpp"

namespace zkpipe::trace {

nlohmann::json to_chrome_trace(std::span<const Span> spans);
void write_chrome_trace(const std::filesystem::path& path, std::span<const Span> spans);

}  // namespace zkpipe::trace
