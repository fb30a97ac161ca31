// Contract: a Scenario is everything one simulation needs: hardware, workload, policy settings,
// calibrated costs and faults, read from a TOML file (keys documented in scenarios/README.md).
// Loading is strict: an unknown key, a value of the wrong type or out of range raises
// ScenarioError whose message names the file, the line and the key. A scenario may name
// calibration files (`calibration = "path.toml"` or a list, relative to the scenario) whose
// tables are read first, in order, and overridden by the scenario's own keys. `[sweep]` lists values for any key; a sweep
// expands into one Scenario per point (cartesian product, keys in alphabetical order).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "engine/r1cs/domain_size.hpp"
#include "faults/fault_injector.hpp"
#include "policy/job_settings.hpp"
#include "trace/trace.hpp"

namespace zkpipe::model {

// The units of a scenario's *_mib and *_gib keys, in bytes.
inline constexpr double bytes_per_mib = double(1ull << 20), bytes_per_gib = double(1ull << 30);

struct ScenarioError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Host-to-device time per GB on one path under memory load (t = memory-loading threads):
//   s_per_gb(t) = 1 / link_gbps + overhead_s_per_gb + per_thread_s_per_gb * t
//                 + per_thread_squared_s_per_gb * t^2
// The overhead is what the path adds on an idle host (pageable: the driver's bounce-buffer
// copy); the thread terms are the memory-bus interference (fitted from data/h200-h2d.csv).
struct H2dPathCost {
  double overhead_s_per_gb = 0;
  double per_thread_s_per_gb = 0;
  double per_thread_squared_s_per_gb = 0;

  double rate_gbps(double link_gbps, double loading_threads) const;
};

// GPU phase time: fixed_s + per_mitem_s * items / 1e6 (items: the engine's, gpu_kernels.hpp).
// Over a key streamed from pinned host memory the engine runs the kernel once per chunk of the
// key's points (each run with its own digits, sort, bucket reduction, index upload and result
// download): each chunk costs stream_chunk_s on top of its share of seconds(items); unset, the
// phase's default (gpu_kernels.hpp: default_stream_chunk_s).
struct PhaseCost {
  double fixed_s = 0;
  double per_mitem_s = 0;
  std::optional<double> stream_chunk_s;
  double seconds(std::uint64_t items) const { return fixed_s + per_mitem_s * double(items) / 1e6; }
};

struct Calibration {
  H2dPathCost h2d_pinned;
  H2dPathCost h2d_pageable;
  // Synthesis time of one partition: core_s_per_mconstraint * constraints / 1e6
  //   * (1 + slowdown_per_extra_thread * (synthesizing threads - 1)) * synthesis_share_factor() * f, where f is one of
  // synth_time_factors, drawn uniformly from the scenario's seed keyed by partition and attempt
  // (calibration: the measured times relative to the fit, mean 1); none: f = 1.
  double synth_core_s_per_mconstraint = 0;
  double synth_slowdown_per_extra_thread = 0;
  std::vector<double> synth_time_factors;
  // The share of a synthesis that runs in parallel on its cores, p: the time above is for one
  // core, and on the cores the engine gives it (synthesis_cores_each) a synthesis takes
  // synthesis_share_factor() of it. 0: one core each, as the engine synthesized until 2026-11-29.
  double synth_parallel_fraction = 0;
  // What the share factor misses, measured: where the calibration's syntheses ran on several
  // whole numbers of cores, how much longer than synthesis_share_factor() says they took on each
  // (cores -> factor; synthesis_cores_factor reads it). Empty: 1.
  std::map<std::uint32_t, double> synth_cores_factors;
  double synth_memory_load_threads = 1;  // memcpy-equivalent memory-loading threads per synthesis thread
  double assemble_s = 0;
  // The worker's proof assembly holds its GPU's compute section (the engine assembles inside it).
  bool assemble_in_compute_section = false;
  // CPU seconds a worker spends inside its GPU's compute section with no kernel running (the
  // engine split the witness there, after the first kernels): the GPU is held but idle.
  double compute_section_host_s = 0;
  // CPU seconds a worker spends after its copy, before it takes its GPU's compute section (the
  // engine's witness split): another worker's kernels may run meanwhile.
  double witness_split_s = 0;
  double verify_s = 0;  // CPU seconds to verify a proof, on the worker after assembly (0: no verify)
  // How much longer than its cost above a worker's host work (split, assembly, verification) takes
  // with n syntheses running: entry n, the last for more (execution_rate reads it). Empty: the
  // syntheses' memory slowdown (host_rate), as before the calibration measured it.
  std::vector<double> host_work_load_factors;
  std::map<trace::Phase, PhaseCost> gpu_phase_cost;  // only phases listed are simulated
};

// Calls visit(table, key, min, max, c.field...) for each single value of a calibration, named by
// its calibration file's table and key, with the range a scenario accepts, for each of
// `calibrations` (Calibrations, or calibration.hpp's CalibrationFits, whose fields are optional):
// the one list that reads, writes and merges them.
template <class Visit, class... Calibrations>
void for_each_calibration_value(Visit&& visit, Calibrations&... c) {
  visit("synthesis", "core_s_per_mconstraint", 1e-9, 1e6, c.synth_core_s_per_mconstraint...);
  visit("synthesis", "slowdown_per_extra_thread", 0.0, 10.0, c.synth_slowdown_per_extra_thread...);
  visit("synthesis", "memory_load_threads", 0.0, 64.0, c.synth_memory_load_threads...);
  visit("synthesis", "parallel_fraction", 0.0, 1.0, c.synth_parallel_fraction...);
  visit("cpu", "assemble_s", 0.0, 1e4, c.assemble_s...);
  visit("cpu", "assemble_in_compute_section", 0.0, 1.0, c.assemble_in_compute_section...);
  visit("cpu", "compute_section_host_s", 0.0, 1e4, c.compute_section_host_s...);
  visit("cpu", "witness_split_s", 0.0, 1e4, c.witness_split_s...);
  visit("cpu", "verify_s", 0.0, 1e4, c.verify_s...);
}

// 1 - p + p * inverse_cores: how much of its one-core time a synthesis takes on 1 / inverse_cores
// cores (inverse_cores: the mean of 1 / cores over its span where its cores varied).
inline double synthesis_share_factor(double parallel_fraction, double inverse_cores) {
  return 1 - parallel_fraction + parallel_fraction * inverse_cores;
}

// The measured correction of synthesis_share_factor on `cores` cores: `factors`' (cores -> factor)
// interpolated linearly in 1 / cores between the core counts it lists, the nearest one's beyond
// them, 1 where it lists none.
double synthesis_cores_factor(const std::map<std::uint32_t, double>& factors, double cores);

struct Hardware {
  std::uint32_t cores = 16;
  // The host's memory available to a job, which the default host budget takes 80 % of (the
  // engine's rule on the memory available at start): 128 GiB, the H200 host's.
  std::uint64_t host_memory_bytes = 128ull << 30;
  double host_memory_gbps = 150;
  double pcie_h2d_gbps = 55.3;
  std::uint32_t copy_engines_h2d = 1;
  std::uint32_t gpus = 1;
  std::uint64_t h2d_chunk_bytes = 64ull << 20;
  // false: the host page-locks no memory (the engine where no CUDA device is present), so pinned
  // staging's slabs are pageable memory and their copies take the pageable path.
  bool pins_host_memory = true;
};

struct Workload {
  std::uint32_t partitions = 8;
  std::uint64_t constraints_per_partition = 1ull << 24;
  // a, b, c: one 32-byte Fr each per row of the domain, which holds the constraints and a little
  // more (zkpipe validate states a measured run's exact bytes: its a/b/c bytes / its constraints).
  double bytes_per_constraint = 96;
  // Shares of z = (1, public inputs, witness): its scalars equal to 0 and equal to 1.
  double zero_scalar_share = 0;
  double one_scalar_share = 0;
  // Shares of z that B1 and B2 leave out where the key splits B (the variables absent from B,
  // groth16::ProvingKey::splits_b_query): its 1-scalars there and its significant scalars there.
  double b_absent_one_share = 0;
  double b_absent_significant_share = 0;
  std::uint64_t variables = 0;      // z's length; 0: as many as the constraints
  std::uint32_t public_inputs = 0;  // rows of the domain; the L MSM runs over the witness without them
  std::uint32_t public_inputs_one = 0;   // of them, equal to 1 (z's 1-scalars that L lacks, ONE aside)
  std::uint32_t public_inputs_zero = 0;  // equal to 0; the others are significant scalars
  // Where the key streams (srs_residency pinned-host), the points of each chunk the MSMs copy
  // their bases in (the engine's CUDA backend's; gpu_kernels.hpp).
  std::uint64_t stream_chunk_points = policy::default_stream_chunk_points;
  // Each attempt's witness splits, copied to its GPU after the split, before the compute section
  // (from pinned memory where staging is pinned); 0: none (the MSMs carry their own scalars).
  std::uint64_t witness_upload_bytes = 0;
  // What the backend holds on each GPU (the engine's sidecar settings.device_footprint), which the
  // device budget fits workers and the key into; all zero: unknown, no plan.
  policy::DeviceFootprint device;
  // What the host budget holds beside the partitions' a/b/c, as the engine's budget does: each
  // partition's witness, the proving key and each worker's buffers (0: none).
  std::uint64_t host_witness_bytes = 0;
  std::uint64_t host_key_bytes = 0;
  std::uint64_t host_worker_bytes = 0;

  std::uint64_t partition_abc_bytes() const {
    return std::uint64_t(std::llround(double(constraints_per_partition) * bytes_per_constraint));
  }
  std::uint64_t z_length() const { return variables > 0 ? variables : constraints_per_partition; }
  // The evaluation domain of the NTTs and the H MSM, as the engine's setup sizes it.
  std::uint64_t domain_size() const {
    return std::uint64_t{1} << zk::r1cs::domain_lg_size(constraints_per_partition, public_inputs);
  }
  // The host bytes the policy admits a partition with: a/b/c and witness.
  std::uint64_t partition_host_bytes() const { return partition_abc_bytes() + host_witness_bytes; }
};

using policy::SrsResidency;
using policy::SynthesisCoreShare;
using policy::synthesis_core_share_names;
using policy::synthesis_cores_each;

// The pipeline's settings, the engine's own vocabulary and defaults (policy::JobSettings: [policy]
// keys absent choose as `zkpipe prove` does, from [hardware] and [workload]), and how the
// simulated engine shares cores between syntheses.
struct PolicyKnobs : policy::JobSettings {
  SynthesisCoreShare synthesis_core_share = SynthesisCoreShare::pooled;
};

// Faults are drawn by the one seeded faults::FaultInjector (keyed by partition, attempt and
// worker, so a seed replays them exactly; its seed is the scenario's); see
// engine/faults/fault_injector.hpp for each fault. The model injects GPU errors, slow and stalled
// copies and worker deaths (as a copy ends); neither wrong results nor the CUDA engine's faults.
struct Faults : faults::FaultOptions {
  bool pinned_allocation_fails = false;  // the pool cannot be pinned: pageable fallback
  std::vector<double> worker_death_s;    // worker i dies at worker_death_s[i] (simulated seconds)
};

struct Scenario {
  std::string name;
  std::filesystem::path file;  // empty when built in code
  std::uint64_t seed = 1;
  Hardware hardware;
  Workload workload;
  PolicyKnobs policy;
  Calibration calibration;
  Faults faults;
  toml::table table;  // the merged TOML (calibration + scenario) this was read from, [sweep] removed
  std::string device_plan_change;  // what the device-memory plan changed (fewer workers, the key streamed); empty: nothing

  policy::JobShape job_shape() const;
  policy::PolicySettings policy_settings() const;
  policy::Staging staging() const { return policy.staging.value_or(policy::Staging::pinned); }
  // The memory the copies of a pipeline staging `staging` read: pageable where the host pins none.
  policy::Staging copies_staging(policy::Staging staging) const {
    return hardware.pins_host_memory ? staging : policy::Staging::pageable;
  }
  faults::FaultOptions fault_options() const;
};

// One point of a sweep: the swept keys with the values of this point, and the scenario there.
struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> settings;  // key, value as TOML text
  Scenario scenario;
};

struct LoadedScenario {
  Scenario base;                         // the file without its [sweep]
  std::vector<SweepPoint> sweep_points;  // empty when the file has no [sweep]
};

LoadedScenario load_scenario_file(const std::filesystem::path& path);
// `origin` names the text in error messages; `directory` resolves a calibration include.
LoadedScenario parse_scenario_text(std::string_view text, const std::string& origin,
                                   const std::filesystem::path& directory);
// The scenario with `key = value_toml` set (e.g. "policy.staging", "\"pageable\""), re-validated.
Scenario with_setting(const Scenario& scenario, const std::string& key, const std::string& value_toml);

// A PCIe x16 generation's host-to-device rate (hardware.pcie_generation): Gen5 55.3 GB/s, measured
// on the H200 host, each older generation half.
double pcie_generation_gbps(std::uint64_t generation);

}  // namespace zkpipe::model
