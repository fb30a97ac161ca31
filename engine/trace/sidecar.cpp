#include "sidecar.hpp"

#include <fstream>

#include <fmt/format.h>

#include "engine/util/atomic_file.hpp"
#include "engine/util/json_number.hpp"
#include "trace_csv.hpp"

namespace zkpipe::trace {

namespace {

// Schema 3 moved a simulation's scenario file from "scenario" to "scenario"."scenario_file".
constexpr const char* sidecar_schema = "zkpipe-trace-sidecar/3";

// Calls visit(key, field) for every fact, its key the field's name (as NLOHMANN_DEFINE_TYPE_*
// would); std::optional facts may be absent, the others are required.
#define FACT(name) visit(#name, f.name)
template <typename Facts, typename Visit>  // Facts: MachineFacts, const or not
void for_each_machine_fact(Facts& f, Visit visit) {
  FACT(cores), FACT(available_memory_bytes), FACT(cuda_devices), FACT(gpus), FACT(host_memory_gbps);
  FACT(copy_engines_h2d), FACT(pcie_h2d_gbps), FACT(idle_h2d_gbps), FACT(idle_h2d_from);
}

template <typename Facts, typename Visit>  // Facts: JobFacts, const or not
void for_each_job_fact(Facts& f, Visit visit) {
  FACT(job), FACT(partitions), FACT(constraints_per_partition), FACT(lg_domain), FACT(public_inputs), FACT(variables);
  FACT(partition_abc_bytes), FACT(partition_witness_bytes), FACT(proving_key_bytes), FACT(worker_host_bytes);
  FACT(jobs), FACT(logs), FACT(cuzk_partitions), FACT(scenario_file);
}
#undef FACT

struct FactWriter {
  nlohmann::json& json;
  template <typename T>
  void operator()(const char* key, const std::optional<T>& fact) const {
    if (fact) json[key] = *fact;
  }
  template <typename T>
  void operator()(const char* key, const T& fact) const {
    json[key] = fact;
  }
};

// Reads the facts of one section of a sidecar ("machine", "scenario"): a fact mistyped, or
// required and missing, is a TraceError naming section.key.
struct FactReader {
  const nlohmann::json& json;
  const char* section;
  template <typename T>
  void operator()(const char* key, std::optional<T>& fact) const {
    if (json.contains(key)) fact = get<T>(key);
  }
  template <typename T>
  void operator()(const char* key, T& fact) const {
    if (!json.contains(key)) throw TraceError(fmt::format("no {}.{}: every sidecar states it", section, key));
    fact = get<T>(key);
  }
  template <typename T>
  T get(const char* key) const {
    try {
      if constexpr (std::is_arithmetic_v<T>) return zk::json_number<T>(json.at(key), fmt::format("{}.{}", section, key));
      else return json.at(key).get<T>();
    } catch (const nlohmann::json::exception& error) {
      throw TraceError(fmt::format("{}.{}: {}", section, key, error.what()));
    } catch (const std::invalid_argument& error) {  // json_number's, which names section.key
      throw TraceError(error.what());
    }
  }
};

}  // namespace

void to_json(nlohmann::json& json, const MachineFacts& facts) {
  for_each_machine_fact(facts, FactWriter{json = nlohmann::json::object()});
}
void from_json(const nlohmann::json& json, MachineFacts& facts) { for_each_machine_fact(facts, FactReader{json, "machine"}); }
void to_json(nlohmann::json& json, const JobFacts& facts) {
  for_each_job_fact(facts, FactWriter{json = nlohmann::json::object()});
}
void from_json(const nlohmann::json& json, JobFacts& facts) { for_each_job_fact(facts, FactReader{json, "scenario"}); }

nlohmann::json to_json(const Sidecar& sidecar) {
  return {{"schema", sidecar_schema},
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
  if (!source) throw TraceError("source must be measured or simulated");
  sidecar.source = *source;
  const nlohmann::json scenario = json.value("scenario", nlohmann::json::object());
  if (sidecar.source == Source::simulated && json.value("schema", std::string()) != sidecar_schema)
    sidecar.scenario.scenario_file = scenario;
  else
    sidecar.scenario = scenario.get<JobFacts>();
  sidecar.settings = json.value("settings", nlohmann::json::object());
  sidecar.machine = json.value("machine", nlohmann::json::object()).get<MachineFacts>();
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
  } catch (const std::exception& error) {  // a JSON error or a TraceError naming the key
    throw TraceError("sidecar " + path.string() + ": " + error.what());
  }
}

}  // namespace zkpipe::trace
