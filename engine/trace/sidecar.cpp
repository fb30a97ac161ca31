#include "sidecar.hpp"

#include <fstream>

#include "engine/util/atomic_file.hpp"
#include "trace_csv.hpp"

namespace zkpipe::trace {

nlohmann::json to_json(const Sidecar& sidecar) {
  return {{"schema", "zkpipe-trace-sidecar/2"},
          {"source", source_name(sidecar.source)},
          {"scenario", sidecar.scenario},
          {"settings", sidecar.settings},
          {"machine", sidecar.machine},
          {"versions", sidecar.versions},
          {"summary", sidecar.summary}};
}

nlohmann::json summary_json(const TraceSummary& summary) {
  nlohmann::json json = {{"partitions_completed", summary.partitions_completed}, {"h2d_bytes", summary.h2d_bytes}};
  for (const auto& [name, value] : summary_metrics(summary)) json[name] = value;
  return json;
}

Sidecar sidecar_from_json(const nlohmann::json& json) {
  Sidecar sidecar;
  const auto source = parse_source(json.at("source").get<std::string>());
  if (!source) throw TraceError("sidecar: source must be measured or simulated");
  sidecar.source = *source;
  sidecar.scenario = json.value("scenario", nlohmann::json::object());
  sidecar.settings = json.value("settings", nlohmann::json::object());
  sidecar.machine = json.value("machine", nlohmann::json::object());
  sidecar.versions = json.value("versions", std::map<std::string, std::string>{});
  sidecar.summary = json.value("summary", nlohmann::json::object());
  return sidecar;
}

std::filesystem::path sidecar_path_for(const std::filesystem::path& trace_csv) {
  std::filesystem::path path = trace_csv;
  return path.replace_extension(".json");
}

void write_sidecar(const std::filesystem::path& path, const Sidecar& sidecar) {
  zk::write_text_atomically(path, to_json(sidecar).dump(2) + '\n');
}

Sidecar read_sidecar(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw TraceError("cannot open sidecar " + path.string());
  try {
    return sidecar_from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& error) {
    throw TraceError("sidecar " + path.string() + ": " + error.what());
  }
}

}  // namespace zkpipe::trace
