#include "sidecar.hpp"

#include <fstream>

#include <fmt/format.h>

#include "engine/util/atomic_file.hpp"
#include "engine/util/json_fields.hpp"
#include "trace_csv.hpp"

namespace zkpipe::trace {

namespace {

// Schema 3 moved a simulation's scenario file from "scenario" to "scenario"."scenario_file".
constexpr const char* sidecar_schema = "zkpipe-trace-sidecar/3";

// Calls visit(key, field) for every fact (zk::JsonFieldWriter, zk::JsonFieldReader); std::optional
// facts may be absent, the others are required.
#define FACT(name) visit(#name, f.name)
template <typename Facts, typename Visit>  // Facts: MachineFacts, const or not
void machine_facts(Facts& f, Visit visit) {
  FACT(cores), FACT(available_memory_bytes), FACT(cuda_devices), FACT(gpus), FACT(host_memory_gbps);
  FACT(copy_engines_h2d), FACT(pcie_h2d_gbps), FACT(idle_h2d_gbps), FACT(idle_h2d_from);
}

template <typename Facts, typename Visit>  // Facts: JobFacts, const or not
void job_facts(Facts& f, Visit visit) {
  FACT(job), FACT(partitions), FACT(constraints_per_partition), FACT(lg_domain), FACT(public_inputs), FACT(variables);
  FACT(partition_abc_bytes), FACT(partition_witness_bytes), FACT(proving_key_bytes), FACT(worker_host_bytes);
  FACT(jobs), FACT(logs), FACT(cuzk_partitions), FACT(scenario_file);
}

template <typename Facts, typename Visit>  // Facts: RunOutcome, const or not
void outcome_facts(Facts& f, Visit visit) {
  FACT(proved), FACT(failed), FACT(failed_attempts), FACT(workers_lost), FACT(wall_s), FACT(pool_allocation_s);
}

// What the run made of its settings, beside the job's own (policy::JobSettings): all but
// "staging", the copies' memory, which shares its key with the job's.
template <typename Settings, typename Visit>  // Settings: RunSettings, const or not
void run_facts(Settings& f, Visit visit) {
  visit("synthesis_core_share", f.synthesis_core_share, policy::synthesis_core_share_names);
  visit("stage_alone", f.stage_alone, stage_alone_names);
  FACT(gpus), FACT(fixed_base_tables), FACT(device_footprint), FACT(device_bytes_planned), FACT(outcome), FACT(seed);
  FACT(injected_faults);
}
#undef FACT

}  // namespace

void to_json(nlohmann::json& json, const MachineFacts& facts) {
  machine_facts(facts, zk::JsonFieldWriter{json = nlohmann::json::object()});
}
void from_json(const nlohmann::json& json, MachineFacts& facts) {
  machine_facts(facts, zk::JsonFieldReader{json, "machine", true});
}
void to_json(nlohmann::json& json, const JobFacts& facts) {
  job_facts(facts, zk::JsonFieldWriter{json = nlohmann::json::object()});
}
void from_json(const nlohmann::json& json, JobFacts& facts) {
  job_facts(facts, zk::JsonFieldReader{json, "scenario", true});
}
void to_json(nlohmann::json& json, const RunOutcome& outcome) {
  outcome_facts(outcome, zk::JsonFieldWriter{json = nlohmann::json::object()});
}
void from_json(const nlohmann::json& json, RunOutcome& outcome) {
  outcome_facts(outcome, zk::JsonFieldReader{json, "settings.outcome", true});
}

void to_json(nlohmann::json& json, const RunSettings& settings) {
  json = settings.job;
  if (json.contains("staging")) json["staging_requested"] = json["staging"];
  if (settings.copies_staging) json["staging"] = policy::staging_name(*settings.copies_staging);
  else json.erase("staging");
  if (!settings.backend.empty()) json["backend"] = settings.backend;
  run_facts(settings, zk::JsonFieldWriter{json});
}

// "staging" is the copies' memory and "staging_requested" the job's (sidecars before 2026-11-29
// state the one staging, both); fake runs wrote their injected faults as "fake_device" until
// 2026-12-05.
void from_json(const nlohmann::json& json, RunSettings& settings) {
  const zk::JsonFieldReader read{json, "settings"};
  settings.job = json.get<policy::JobSettings>();
  read("staging", settings.copies_staging, policy::staging_names);
  read("staging_requested", settings.job.staging, policy::staging_names);
  read("backend", settings.backend);
  read("fake_device", settings.injected_faults);
  run_facts(settings, read);
}

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

Sidecar sidecar_from_json(const nlohmann::json& json) try {
  Sidecar sidecar;
  const auto source = parse_source(json.at("source").get<std::string>());
  if (!source) throw TraceError("source must be measured or simulated");
  sidecar.source = *source;
  const nlohmann::json scenario = json.value("scenario", nlohmann::json::object());
  if (sidecar.source == Source::simulated && json.value("schema", std::string()) != sidecar_schema)
    sidecar.scenario.scenario_file = scenario;
  else
    sidecar.scenario = scenario.get<JobFacts>();
  sidecar.settings = json.value("settings", nlohmann::json::object()).get<RunSettings>();
  sidecar.machine = json.value("machine", nlohmann::json::object()).get<MachineFacts>();
  sidecar.versions = json.value("versions", std::map<std::string, std::string>{});
  sidecar.summary = json.value("summary", nlohmann::json::object());
  return sidecar;
} catch (const std::invalid_argument& error) {  // a fact or setting refused, naming its key
  throw TraceError(error.what());
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
