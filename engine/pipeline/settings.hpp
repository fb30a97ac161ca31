// settings.hpp — what a user sets for an engine job, and the defaults a user would choose,
// resolved against the machine and the job's sizes before the job starts. A zero (or empty,
// or unset) field means "choose for me"; resolve_settings() fills every one, explains nothing
// silently (describe() prints the result, to_json() stores it in the trace's sidecar) and throws
// zk::Error naming the setting when the settings cannot make progress.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/pipeline/fake_backend.hpp"
#include "engine/util/enum_names.hpp"
#include "policy/device_memory.hpp"
#include "policy/scheduling_policy.hpp"

namespace zk::pipeline {

using zkpipe::policy::PoolLayout;
using zkpipe::policy::Staging;

// Where the proving key's points live while proving: copied once to each worker's device, or in
// page-locked host memory that kernels read per call (the model's srs_residency).
enum class SrsResidency { device, pinned_host };
inline constexpr EnumNames<SrsResidency, 2> srs_residency_names{
    {{"device", SrsResidency::device}, {"pinned-host", SrsResidency::pinned_host}}};
inline std::string_view srs_residency_name(SrsResidency residency) { return name_of(srs_residency_names, residency); }

// Measuring one stage's capacity alone: `synthesis` synthesizes every partition and discards it
// (no copy, no proof); `gpu` synthesizes partition 0 once and then hands its rows to every
// partition (a copy, not a synthesis), so copies and GPU work run without synthesis load. Proofs
// are still verified; the CLI writes none for these runs.
enum class StageAlone { none, synthesis, gpu };
inline constexpr EnumNames<StageAlone, 3> stage_alone_names{
    {{"none", StageAlone::none}, {"synthesis", StageAlone::synthesis}, {"gpu", StageAlone::gpu}}};
inline std::string_view stage_alone_name(StageAlone stage) { return name_of(stage_alone_names, stage); }

struct Settings {
  // cpu | cuda | fake | faulty-cuda (cuda with injected faults); "": cuda where a device is present, else cpu
  std::string backend;
  uint32_t synthesis_threads = 0;       // 0: half the cores (the rest serve the workers' host work)
  uint32_t partitions_in_flight = 0;    // admitted, not yet copied; 0: synthesis threads + GPU workers
  std::optional<Staging> staging;       // unset: pinned where a CUDA device is present, else pageable
  uint32_t pool_slabs = 0;              // pinned staging, per pool; 0: partitions in flight over the pools, as the budget allows
  PoolLayout pool_layout = PoolLayout::per_host;  // one pinned pool for the host, or one per GPU
  uint64_t budget_bytes = 0;            // host memory budget; 0: the key plus 80% of the memory available at start
  uint64_t device_budget_bytes = 0;     // per GPU; 0: 90% of the free memory of the job's smallest GPU at start
  uint32_t gpus = 0;                    // 0: every CUDA device (cuda), else 1
  uint32_t workers_per_gpu = 2;         // each with its own streams and buffers
  SrsResidency srs_residency = SrsResidency::device;
  uint32_t retry_limit = 2;             // failed attempts of a partition before it is reported
  StageAlone stage_alone = StageAlone::none;
  FakeDeviceOptions fake;               // faults of fake and faulty-cuda, delays of fake
};

// Whether the backend's workers run on CUDA devices (cuda, faulty-cuda); whether it injects the
// faults of Settings::fake.faults (fake, faulty-cuda).
bool uses_cuda(std::string_view backend);
bool injects_faults(std::string_view backend);

// Pinned pools the settings call for: one per host, or one per GPU (each of pool_slabs slabs).
uint32_t pinned_pools(const Settings& settings);

struct MachineFacts {
  uint32_t cores = 1;
  uint64_t available_memory_bytes = 0;  // 0 when unknown
  int cuda_devices = 0;
};
MachineFacts machine_facts();

// The sizes the defaults depend on.
struct JobShape {
  uint32_t partitions = 1;
  uint64_t abc_bytes = 0;      // one partition's a, b, c
  uint64_t witness_bytes = 0;  // one partition's assignment z
  uint64_t key_bytes = 0;      // the proving key, held all job long
  uint64_t partition_host_bytes() const { return abc_bytes + witness_bytes; }
};

// Host bytes one GPU worker holds all job long: the witness of the partition it proves and its
// two splits (scalars and indices, see groth16::split_for_proof), plus, on CUDA, the pinned copy
// of the splits its witness is staged from (pinned staging only), or the staged a/b/c where the
// backend computes in host memory.
uint64_t worker_host_bytes(const JobShape& shape, std::string_view backend, Staging staging);

Settings resolve_settings(Settings requested, const JobShape& shape, const MachineFacts& machine);

// Fits the resolved settings' workers and key into each GPU's memory (policy::plan_device_memory)
// for a backend whose workers hold `footprint`: resolves device_budget_bytes (from
// `device_free_bytes`, the smallest free memory of the job's GPUs, or the fake device's size; 0:
// unknown, no limit), then lowers workers_per_gpu or streams the key (srs_residency pinned-host)
// where the plan says so, re-resolving the rest. Throws zk::Error naming the sizes when even one
// worker cannot fit. The plan's `change` says what it changed (empty when nothing).
zkpipe::policy::DevicePlan fit_device_memory(Settings& settings, const Settings& requested, const JobShape& shape,
                                            const MachineFacts& machine, const zkpipe::policy::DeviceFootprint& footprint,
                                            uint64_t device_free_bytes);

std::string describe(const Settings& settings);
nlohmann::json to_json(const Settings& settings);

}  // namespace zk::pipeline
