// Contract: plan_device_memory() fits one GPU's share of a job into that GPU's device-memory
// budget, before anything is allocated, so that a job never meets a CUDA out-of-memory error: it
// chooses how many workers the GPU runs and whether the proving key's points sit on the device or
// stream from pinned host memory, or refuses the job naming the sizes. Shared by the engine (the
// CUDA and fake devices) and the model; pure, no CUDA. Promises, checked by tests/policy:
// - the planned bytes never exceed the budget;
// - the key stays on the device whenever at least one worker fits beside it, and then the plan
//   runs as many workers (at most those asked for) as fit;
// - the key streams only when asked to or when no worker fits beside it, and then runs as many
//   workers as fit without it;
// - a budget that cannot hold one streaming worker is refused (std::invalid_argument naming the
//   budget and each part).
// plan_fixed_bases() then spends what the plan leaves of the budget on fixed-base tables of the
// key's arrays (never at the cost of a worker or of the key's place on the device), at most one
// table an array (a row for every window, or fewer rows and more bucket sets), promising:
// - the planned bytes, tables included, never exceed the budget;
// - of the choices that fit (with `automatic`, of the tables that pay within the job), one that
//   saves the most estimated GPU time; the tables of a, b1 and b2 have one number of sets;
// - with `off`, or with the key streamed, there is none.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/enum_names.hpp"

namespace zkpipe::policy {

// The proving key's point arrays (groth16::ProvingKey's a, b1, l, h in G1 and b2 in G2).
enum class KeyArray { a, b1, l, h, b2 };
inline constexpr zk::EnumNames<KeyArray, 5> key_array_names{{{"a", KeyArray::a},
                                                             {"b1", KeyArray::b1},
                                                             {"l", KeyArray::l},
                                                             {"h", KeyArray::h},
                                                             {"b2", KeyArray::b2}}};
inline std::string_view key_array_name(KeyArray array) { return zk::name_of(key_array_names, array); }
inline bool in_g2(KeyArray array) { return array == KeyArray::b2; }
// The arrays whose MSMs take the whole witness as scalars (one decomposition of it serves them all
// where their tables have one number of bucket sets).
inline bool takes_whole_witness(KeyArray array) { return array != KeyArray::l && array != KeyArray::h; }

// A fixed-base table of one of the key's arrays, of `sets` bucket sets: row r holds the points
// times 2^(c sets r), so one set has a row for every window of c-bit digits and two sets every
// other row, in half the bytes, at the cost of a second bucket set to reduce each MSM.
struct FixedBaseTable {
  KeyArray array = KeyArray::a;
  std::uint32_t sets = 1;
  bool operator==(const FixedBaseTable&) const = default;
};

// A fixed-base table a backend can build on each GPU for one of the key's arrays, which turns
// every MSM over the array into one over the table: the bytes it holds beyond the array's own, the
// bytes its curve's MSMs over tables take beyond the plain MSMs' (once per curve), and estimates
// of the seconds its build takes and of the GPU seconds it saves each partition.
struct FixedBaseOption {
  FixedBaseTable table;
  std::uint64_t table_bytes = 0;
  std::uint64_t workspace_bytes = 0;
  double build_s = 0;
  double saving_s = 0;
  bool operator==(const FixedBaseOption&) const = default;
};

// Which fixed-base tables a job builds: none, those that fit and pay within the job, or all
// that fit.
enum class FixedBaseTables { off, automatic, on };
inline constexpr zk::EnumNames<FixedBaseTables, 3> fixed_base_tables_names{
    {{"off", FixedBaseTables::off}, {"auto", FixedBaseTables::automatic}, {"on", FixedBaseTables::on}}};

// What a backend holds in one GPU's memory for a job: once per GPU (the key's points, the kernels'
// workspaces, shared by its workers), and per worker (its own buffers; `streaming_bytes` more
// where the key's points stream from the host through the worker's chunk buffers).
struct DeviceFootprint {
  std::uint64_t key_bytes = 0;
  std::uint64_t shared_bytes = 0;
  std::uint64_t worker_bytes = 0;
  std::uint64_t streaming_bytes = 0;
  std::vector<FixedBaseOption> fixed_bases;  // the tables it can build, any number an array
  bool holds_device_memory() const { return key_bytes + shared_bytes + worker_bytes + streaming_bytes > 0; }
  bool operator==(const DeviceFootprint&) const = default;
};

// The key's points as a backend holds and streams them: an affine G1 and an affine G2 point of
// BLS12-381 (two and four 48-byte coordinates; groth16/keys.cpp checks them against the curve
// types), and the points of each chunk in which the CUDA backend streams a key that is not on the
// device (srs_residency pinned-host) into its MSMs.
inline constexpr std::uint64_t g1_point_bytes = 96;
inline constexpr std::uint64_t g2_point_bytes = 192;
inline constexpr std::uint64_t default_stream_chunk_points = std::uint64_t{1} << 22;

struct DevicePlan {
  std::uint32_t workers_per_gpu = 1;
  bool key_on_device = true;
  std::uint64_t bytes = 0;  // what the plan holds on each GPU
  std::vector<FixedBaseTable> fixed_bases;  // the fixed-base tables each GPU builds, in KeyArray order
  // Why the plan differs from what was asked (fewer workers, the key streamed), for a warning;
  // empty when it runs what was asked.
  std::string change;
};

// What each worker adds on one GPU, the key on the device or streamed; and what `workers` workers
// hold there in all.
std::uint64_t per_worker_bytes(const DeviceFootprint& footprint, bool key_on_device);
std::uint64_t device_bytes(const DeviceFootprint& footprint, std::uint32_t workers, bool key_on_device);

DevicePlan plan_device_memory(const DeviceFootprint& footprint, std::uint64_t budget_bytes,
                              std::uint32_t workers_asked, bool key_on_device_asked);

// Whether `tables` lets a job build `option`'s table: `on` any, `automatic` one whose estimated
// saving over partitions_per_gpu partitions exceeds its build time, `off` none.
inline bool may_build(const FixedBaseOption& option, FixedBaseTables tables, std::uint32_t partitions_per_gpu) {
  return tables == FixedBaseTables::on ||
         (tables == FixedBaseTables::automatic && partitions_per_gpu * option.saving_s > option.build_s);
}

// Adds to `plan` (made by plan_device_memory) the fixed-base tables `tables` asks for: of the
// footprint's options (automatic: those whose saving times partitions_per_gpu exceeds their build
// time), at most one an array, the choice that fits what is left of the budget and saves the most
// (the fewest bytes among equals), weighing every choice.
void plan_fixed_bases(const DeviceFootprint& footprint, std::uint64_t budget_bytes, FixedBaseTables tables,
                      std::uint32_t partitions_per_gpu, DevicePlan& plan);

}  // namespace zkpipe::policy
