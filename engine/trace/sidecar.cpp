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

template <typename Facts, typename Visit>  // Facts: RunOutcome, const or not
void for_each_outcome_fact(Facts& f, Visit visit) {
  FACT(proved), FACT(failed), FACT(failed_attempts), FACT(workers_lost), FACT(wall_s), FACT(pool_allocation_s);
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
  // One of `names`, read where the key is present; `fact` kept where it is not.
  template <typename Enum, std::size_t N>
  void choice(const char* key, Enum& fact, const zk::EnumNames<Enum, N>& names) const {
    try {
      fact = zk::json_enum_or(json, section, key, fact, names);
    } catch (const std::invalid_argument& error) {  // naming section.key
      throw TraceError(error.what());
    }
  }
  template <typename Enum, std::size_t N>
  void choice(const char* key, std::optional<Enum>& fact, const zk::EnumNames<Enum, N>& names) const {
    if (json.contains(key)) choice(key, fact.emplace(), names);
  }
  // A fact with a default, read where the key is present.
  template <typename T>
  void if_present(const char* key, T& fact) const {
    if (json.contains(key)) fact = get<T>(key);
  }
  template <typename T>
  T get(const char* key) const {
    const std::string where = fmt::format("{}.{}", section, key);
    try {
      if constexpr (std::is_arithmetic_v<T>) return zk::json_number<T>(json.at(key), where);
      else return json.at(key).get<T>();
    } catch (const nlohmann::json::exception& error) {
      throw TraceError(fmt::format("{}: {}", where, error.what()));
    } catch (const std::invalid_argument& error) {  // json_number's, naming `where`, or a from_json's
      const std::string what = error.what();
      throw TraceError(what.starts_with(where) ? what : fmt::format("{}: {}", where, what));
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

void to_json(nlohmann::json& json, const RunOutcome& outcome) {
  for_each_outcome_fact(outcome, FactWriter{json = nlohmann::json::object()});
}
void from_json(const nlohmann::json& json, RunOutcome& outcome) {
  for_each_outcome_fact(outcome, FactReader{json, "settings.outcome"});
}

void to_json(nlohmann::json& json, const RunSettings& settings) {
  json = settings.job;
  json["staging_requested"] = json["staging"];
  if (settings.copies_staging) json["staging"] = policy::staging_name(*settings.copies_staging);
  else json.erase("staging");
  json["synthesis_core_share"] = zk::name_of(policy::synthesis_core_share_names, settings.synthesis_core_share);
  json["gpus"] = settings.gpus;
  if (!settings.backend.empty()) json["backend"] = settings.backend;
  json["stage_alone"] = stage_alone_name(settings.stage_alone);
  json["fixed_base_tables"] = settings.fixed_base_tables;
  const FactWriter write{json};
  write("device_footprint", settings.device_footprint);
  write("device_bytes_planned", settings.device_bytes_planned);
  write("outcome", settings.outcome);
  write("seed", settings.seed);
  write("injected_faults", settings.injected_faults);
}

// "staging" is the copies' memory and "staging_requested" the job's (sidecars before 2026-11-29
// state the one staging, both); fake runs wrote their injected faults as "fake_device" until
// 2026-12-05.
void from_json(const nlohmann::json& json, RunSettings& settings) {
  const FactReader read{json, "settings"};
  try {
    settings.job = json.get<policy::JobSettings>();
  } catch (const std::invalid_argument& error) {  // naming settings.key
    throw TraceError(error.what());
  }
  read.choice("staging", settings.copies_staging, policy::staging_names);
  read.choice("staging_requested", settings.job.staging, policy::staging_names);
  read.choice("synthesis_core_share", settings.synthesis_core_share, policy::synthesis_core_share_names);
  read.choice("stage_alone", settings.stage_alone, stage_alone_names);
  read.if_present("gpus", settings.gpus);
  read.if_present("backend", settings.backend);
  read.if_present("fixed_base_tables", settings.fixed_base_tables);
  read("device_footprint", settings.device_footprint);
  read("device_bytes_planned", settings.device_bytes_planned);
  read("outcome", settings.outcome);
  read("seed", settings.seed);
  read("injected_faults", settings.injected_faults);
  read("fake_device", settings.injected_faults);
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
  sidecar.settings = json.value("settings", nlohmann::json::object()).get<RunSettings>();
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
