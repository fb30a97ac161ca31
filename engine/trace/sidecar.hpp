// Contract: the JSON sidecar that travels next to a trace CSV (trace.csv -> trace.json). It holds
// the scenario or settings that produced the trace, facts about the machine and the versions of
// the software, so a trace can be compared or recalibrated later without guessing its origin.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "summary.hpp"
#include "trace.hpp"

namespace zkpipe::trace {

struct Sidecar {
  Source source = Source::simulated;
  nlohmann::json scenario = nlohmann::json::object();  // scenario file contents or engine settings
  nlohmann::json settings = nlohmann::json::object();  // effective settings (after defaults)
  nlohmann::json machine = nlohmann::json::object();   // cores, memory, GPUs, PCIe ...
  std::map<std::string, std::string> versions;          // "zkpipe", "simgrid", "cuda" ...
  // The trace's summary_metrics (and partitions_completed, h2d_bytes), written with the trace so
  // that scripts read its figures here rather than from a program's output; empty in sidecars
  // written before it.
  nlohmann::json summary = nlohmann::json::object();
};

// The summary as a sidecar holds it: summary_metrics by name, partitions_completed and h2d_bytes.
nlohmann::json summary_json(const TraceSummary& summary);

nlohmann::json to_json(const Sidecar& sidecar);
Sidecar sidecar_from_json(const nlohmann::json& json);
std::filesystem::path sidecar_path_for(const std::filesystem::path& trace_csv);
void write_sidecar(const std::filesystem::path& path, const Sidecar& sidecar);
Sidecar read_sidecar(const std::filesystem::path& path);

}  // namespace zkpipe::trace
