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
#pragma once

#include <cstdint>
#include <string>

namespace zkpipe::policy {

// What a backend holds in one GPU's memory for a job: once per GPU (the key's points, the kernels'
// workspaces, shared by its workers), and per worker (its own buffers; `streaming_bytes` more
// where the key's points stream from the host through the worker's chunk buffers).
struct DeviceFootprint {
  std::uint64_t key_bytes = 0;
  std::uint64_t shared_bytes = 0;
  std::uint64_t worker_bytes = 0;
  std::uint64_t streaming_bytes = 0;
  bool holds_device_memory() const { return key_bytes + shared_bytes + worker_bytes + streaming_bytes > 0; }
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

}  // namespace zkpipe::policy
