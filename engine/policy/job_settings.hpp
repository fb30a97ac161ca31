// Contract: JobSettings is what a user sets for a proving job's pipeline, one vocabulary for the
// engine (`zkpipe prove`'s options) and the model (a scenario's [policy]): one set of names, one
// default for each setting, one meaning of the host budget. A zero (or unset) field means "choose
// for me"; resolve_job_settings() fills every one from the job's shape and the host, the same way
// for the engine and the model, and throws std::invalid_argument naming the setting as the caller
// names it (SettingNames) when the settings cannot make progress. Pure, no I/O.
//
// The host budget is the whole host memory a job may hold: the proving key and each worker's
// buffers, held all job long, and the partitions in flight (a/b/c and witness each), which the
// scheduling policy admits against what is left (policy_settings()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "policy/device_memory.hpp"
#include "policy/scheduling_policy.hpp"
#include "util/enum_names.hpp"

namespace zkpipe::policy {

// Where the proving key's points live while proving: on each GPU, or in page-locked host memory
// that the kernels stream per call.
enum class SrsResidency { device, pinned_host };
inline constexpr zk::EnumNames<SrsResidency, 2> srs_residency_names{
    {{"device", SrsResidency::device}, {"pinned-host", SrsResidency::pinned_host}}};
inline std::string_view srs_residency_name(SrsResidency residency) { return zk::name_of(srs_residency_names, residency); }

// How the engine splits the host's cores between syntheses: `pooled`, its work pool
// (kernels/util/parallel.hpp) shares them fairly and continuously among the n syntheses running,
// max(1, cores / n) each, the engine since 2026-12-07; `synthesizing`, each of the n running as
// its call starts has max(1, floor(cores / n)) for that call, the engine of 2026-12-01 to 12-07;
// `threads`, each synthesis thread has max(1, floor(cores / threads)) however many synthesize,
// the engine of the traces whose sidecars name no rule.
enum class SynthesisCoreShare { pooled, synthesizing, threads };
inline constexpr zk::EnumNames<SynthesisCoreShare, 3> synthesis_core_share_names{
    {{"pooled", SynthesisCoreShare::pooled},
     {"synthesizing", SynthesisCoreShare::synthesizing},
     {"threads", SynthesisCoreShare::threads}}};

inline double synthesis_cores_each(SynthesisCoreShare rule, std::uint32_t cores, std::uint32_t threads,
                                   std::uint32_t synthesizing) {
  const std::uint32_t sharers = std::max<std::uint32_t>(1, rule == SynthesisCoreShare::threads ? threads : synthesizing);
  if (rule == SynthesisCoreShare::pooled) return std::max(1.0, double(cores) / double(sharers));
  return double(std::max<std::uint32_t>(1, cores / sharers));
}

struct JobSettings {
  std::uint32_t synthesis_threads = 0;     // 0: half the cores (the rest serve the workers' host work)
  std::uint32_t partitions_in_flight = 0;  // admitted, not yet copied; 0: synthesis threads + workers
  std::optional<Staging> staging{};        // unset: pinned where the host can pin memory for a GPU, else pageable
  std::uint32_t pool_slabs = 0;            // per pool, pinned staging; 0: in flight over the pools, as the budget allows
  PoolLayout pool_layout = PoolLayout::per_host;
  std::uint64_t host_budget_bytes = 0;     // 0: the key plus 80 % of the memory available
  std::uint64_t device_budget_bytes = 0;   // per GPU; 0: 90 % of the smallest GPU's free memory (none when unknown)
  std::uint32_t workers_per_gpu = 2;       // each with its own streams and buffers
  SrsResidency srs_residency = SrsResidency::device;
  FixedBaseTables fixed_bases = FixedBaseTables::automatic;  // of the key's arrays, on each GPU
  std::uint32_t retry_limit = 2;           // failed attempts of a partition before it is reported failed
  bool operator==(const JobSettings&) const = default;
};

// The sizes the defaults and the budget depend on (host bytes).
struct JobSizes {
  std::uint32_t partitions = 1;
  std::uint64_t abc_bytes = 0;      // one partition's a, b, c
  std::uint64_t witness_bytes = 0;  // one partition's assignment z
  std::uint64_t key_bytes = 0;      // the proving key, held all job long
  std::uint32_t witness_splits = 2; // splits of z the MSMs take (all, private; a B split where the key has one)
  std::uint64_t partition_host_bytes() const { return abc_bytes + witness_bytes; }
};

// The sizes, and what each worker holds all job long, with pinned and with pageable staging.
struct JobShape : JobSizes {
  std::uint64_t worker_host_bytes_pinned = 0;
  std::uint64_t worker_host_bytes_pageable = 0;
  std::uint64_t worker_host_bytes(Staging staging) const {
    return staging == Staging::pinned ? worker_host_bytes_pinned : worker_host_bytes_pageable;
  }
};

// What the defaults read of the machine the job runs on.
struct HostFacts {
  std::uint32_t cores = 1;
  std::uint64_t available_memory_bytes = 0;  // 0: unknown (then the host budget must be given)
  std::uint32_t gpus = 1;                    // the GPUs the job uses
  bool can_pin = true;                       // pinned staging is possible (a CUDA device, or a simulated GPU)
};

// How the caller spells the settings a refusal asks to change: the command line's options or a
// scenario's keys.
struct SettingNames {
  std::string_view host_budget, pool_slabs, workers, per_host_pools;
};
inline constexpr SettingNames command_line_names{"--budget", "--pool-slabs", "--workers", "--pool-layout per-host"};
inline constexpr SettingNames scenario_names{"[policy] host_budget_gib", "[policy] pool_slabs", "[policy] workers_per_gpu",
                                             "[policy] pool_layout = \"per-host\""};

// Every setting chosen (a resolved JobSettings resolves to itself). Throws std::invalid_argument.
JobSettings resolve_job_settings(JobSettings requested, const JobShape& shape, const HostFacts& host,
                                 const SettingNames& names);

// The host bytes a resolved job holds beside its partitions: the key and every worker's buffers.
std::uint64_t fixed_host_bytes(const JobSettings& resolved, const JobShape& shape, std::uint32_t gpus);

// The scheduling policy's settings for a resolved job: partitions of a/b/c and witness admitted
// against the budget less the key and the workers' buffers.
PolicySettings policy_settings(const JobSettings& resolved, const JobShape& shape, std::uint32_t gpus);

// Fits the job's workers and key into each GPU's device budget (plan_device_memory): lowers
// workers_per_gpu or streams the key (srs_residency pinned-host) where the plan says so; then
// adds the fixed-base tables the settings ask for that fit (plan_fixed_bases). A zero device
// budget is unlimited. Throws std::invalid_argument naming the sizes when no worker fits.
DevicePlan fit_device_memory(JobSettings& settings, const DeviceFootprint& footprint, std::uint32_t partitions_per_gpu);
inline std::uint32_t partitions_per_gpu(std::uint32_t partitions, std::uint32_t gpus) {
  return (partitions + gpus - 1) / std::max<std::uint32_t>(1, gpus);
}

// The settings as the trace sidecar's `settings` holds them (typed both ways: a sidecar written
// before a setting existed reads as that setting's default).
void to_json(nlohmann::json& json, const JobSettings& settings);
void from_json(const nlohmann::json& json, JobSettings& settings);
void to_json(nlohmann::json& json, const DeviceFootprint& footprint);
void from_json(const nlohmann::json& json, DeviceFootprint& footprint);
void to_json(nlohmann::json& json, KeyArray array);  // its name
void from_json(const nlohmann::json& json, KeyArray& array);
void to_json(nlohmann::json& json, const FixedBaseOption& option);
void from_json(const nlohmann::json& json, FixedBaseOption& option);
// {"array": name, "sets": k}; read also from the array's name alone (one set), as sidecars written
// before tables of several sets name them.
void to_json(nlohmann::json& json, const FixedBaseTable& table);
void from_json(const nlohmann::json& json, FixedBaseTable& table);

}  // namespace zkpipe::policy
