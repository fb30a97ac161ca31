// Contract: the JSON sidecar that travels next to a trace CSV (trace.csv -> trace.json). It holds
// the job or scenario that produced the trace, the effective settings, facts about the machine and
// the versions of the software, so a trace can be compared or recalibrated later without guessing
// its origin. Its sections are typed: a fact a writer does not know is absent (an empty
// std::optional, no key), a setting absent reads as its default, and reading a sidecar whose fact
// or setting is mistyped, or whose required fact is missing, throws one TraceError naming the
// file and the key (scenario.partitions, settings.staging). Sidecars of every earlier schema
// read, their absent facts empty.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/util/enum_names.hpp"
#include "policy/job_settings.hpp"
#include "summary.hpp"
#include "trace.hpp"

namespace zkpipe::trace {

// The machine that ran the trace (the engine's), or the one simulated or imported.
struct MachineFacts {
  std::optional<std::uint32_t> cores{};
  std::optional<std::uint64_t> available_memory_bytes{};  // the engine's host memory available
  std::optional<std::uint32_t> cuda_devices{};            // the engine's CUDA devices
  std::optional<std::uint32_t> gpus{};                    // a simulation's GPUs
  std::optional<double> host_memory_gbps{};               // a simulation's host memory bandwidth
  std::optional<std::uint32_t> copy_engines_h2d{};        // a simulation's copy engines per GPU
  // The link's rate, which calibration subtracts from every copy; absent where the engine could
  // copy from pageable memory only.
  std::optional<double> pcie_h2d_gbps{};
  std::optional<double> idle_h2d_gbps{};       // the engine's staging copy with nothing else running ...
  std::optional<std::string> idle_h2d_from{};  // ... from "pinned" or "pageable" memory
  bool operator==(const MachineFacts&) const = default;
};

// The job the trace ran (the sidecar's "scenario"): its name and partitions, which every sidecar
// states, and what the engine (sizes per partition) or the cuzk import (its logs and records)
// knows of it.
struct JobFacts {
  std::string job;  // the circuit, "cuzk", or the simulated scenario's name
  std::uint32_t partitions = 0;
  std::optional<std::uint64_t> constraints_per_partition{};
  std::optional<std::uint32_t> lg_domain{};
  std::optional<std::uint32_t> public_inputs{};
  std::optional<std::uint64_t> variables{};  // z's length: ONE, the public inputs and the witness
  std::optional<std::uint64_t> partition_abc_bytes{};
  std::optional<std::uint64_t> partition_witness_bytes{};
  std::optional<std::uint64_t> proving_key_bytes{};
  std::optional<std::uint64_t> worker_host_bytes{};  // each worker's host buffers, held all job long
  std::optional<std::uint64_t> jobs{};               // cuzk's proofs
  std::optional<std::vector<std::string>> logs{};    // the cuzk logs imported
  std::optional<nlohmann::json> cuzk_partitions{};   // per partition, cuzk's figures beyond the spans
  std::optional<nlohmann::json> scenario_file{};     // a simulation's scenario file, as JSON
  bool operator==(const JobFacts&) const = default;
};

// Measuring one stage's capacity alone (`zkpipe prove --stage-alone`): `synthesis` synthesizes
// every partition and discards it (no copy, no proof); `gpu` synthesizes partition 0 once and then
// hands its rows to every partition (a copy, not a synthesis), so copies and GPU work run without
// synthesis load. Proofs are still verified; the CLI writes none for these runs.
enum class StageAlone { none, synthesis, gpu };
inline constexpr zk::EnumNames<StageAlone, 3> stage_alone_names{
    {{"none", StageAlone::none}, {"synthesis", StageAlone::synthesis}, {"gpu", StageAlone::gpu}}};
inline std::string_view stage_alone_name(StageAlone stage) { return zk::name_of(stage_alone_names, stage); }

// What became of a measured run's partitions, and how long it took.
struct RunOutcome {
  std::uint64_t proved = 0, failed = 0, failed_attempts = 0, workers_lost = 0;
  double wall_s = 0, pool_allocation_s = 0;
  bool operator==(const RunOutcome&) const = default;
};

// The run's settings: the job's as resolved (policy::JobSettings, each at the top level of
// "settings"; its staging, as "staging_requested", the pipeline's: pageable after pinning was
// refused), and what the run made of them.
struct RunSettings {
  policy::JobSettings job;
  // The memory the copies read ("staging"), what calibration fits: pinned where the pipeline's
  // slabs were page-locked; pageable where it staged pageable, or where its host pins no memory
  // (no CUDA device). Absent: unknown.
  std::optional<policy::Staging> copies_staging{};
  // Absent: `threads`, the rule of the engines before 2026-12-01.
  policy::SynthesisCoreShare synthesis_core_share = policy::SynthesisCoreShare::threads;
  std::uint32_t gpus = 1;
  std::string backend{};  // the engine's (cpu, cuda, fake, faulty-cuda); empty elsewhere
  StageAlone stage_alone = StageAlone::none;
  std::optional<policy::DeviceFootprint> device_footprint{};  // what the backend holds on a device
  std::optional<std::uint64_t> device_bytes_planned{};        // per GPU, by the device-memory plan
  std::vector<policy::FixedBaseTable> fixed_base_tables{};    // the fixed-base tables on each GPU
  std::optional<RunOutcome> outcome{};                        // a measured run's
  std::optional<std::uint64_t> seed{};                        // a simulation's
  // The faults a fake or faulty-cuda run injected, as the engine states its options (for people).
  std::optional<nlohmann::json> injected_faults{};
  bool operator==(const RunSettings&) const = default;
};

struct Sidecar {
  Source source = Source::simulated;
  JobFacts scenario;
  RunSettings settings;
  MachineFacts machine;
  std::map<std::string, std::string> versions;  // "zkpipe", "simgrid", "cuda" ...
  // The trace's summary_metrics (and partitions_completed, h2d_bytes), written with the trace so
  // that scripts read its figures here rather than from a program's output; empty in sidecars
  // written before it.
  nlohmann::json summary = nlohmann::json::object();
};

// The summary as a sidecar holds it: summary_metrics by name, partitions_completed and h2d_bytes.
nlohmann::json summary_json(const TraceSummary& summary);

void to_json(nlohmann::json& json, const MachineFacts& facts);
void from_json(const nlohmann::json& json, MachineFacts& facts);
void to_json(nlohmann::json& json, const JobFacts& facts);
void from_json(const nlohmann::json& json, JobFacts& facts);
void to_json(nlohmann::json& json, const RunOutcome& outcome);
void from_json(const nlohmann::json& json, RunOutcome& outcome);
void to_json(nlohmann::json& json, const RunSettings& settings);
void from_json(const nlohmann::json& json, RunSettings& settings);
nlohmann::json to_json(const Sidecar& sidecar);
Sidecar sidecar_from_json(const nlohmann::json& json);
std::filesystem::path sidecar_path_for(const std::filesystem::path& trace_csv);
void write_sidecar(const std::filesystem::path& path, const Sidecar& sidecar);
Sidecar read_sidecar(const std::filesystem::path& path);

}  // namespace zkpipe::trace
