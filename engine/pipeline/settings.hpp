// settings.hpp — what a user sets for an engine job (the pipeline's policy::JobSettings, shared
// with the model, and the engine's own: backend, GPUs, faults), resolved against the machine and
// the job's sizes before the job starts. A zero (or empty, or unset) field means "choose for me";
// resolve_settings() fills every one, explains nothing silently (describe() prints the result,
// to_json() stores it in the trace's sidecar) and throws zk::Error naming the setting when the
// settings cannot make progress.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/pipeline/fake_backend.hpp"
#include "engine/util/enum_names.hpp"
#include "policy/job_settings.hpp"
#include "trace/sidecar.hpp"

namespace zk::pipeline {

using zkpipe::policy::PoolLayout;
using zkpipe::policy::SrsResidency;
using zkpipe::policy::Staging;
using zkpipe::policy::srs_residency_name;
using zkpipe::policy::srs_residency_names;

using zkpipe::trace::StageAlone;  // whether one stage runs alone, and which
using zkpipe::trace::stage_alone_name;
using zkpipe::trace::stage_alone_names;

// The pipeline's settings (synthesis threads, staging, pool, budgets, workers, retries) are the
// model's too (policy::JobSettings); the engine adds the backend, the GPUs it uses and what it
// measures.
struct Settings : zkpipe::policy::JobSettings {
  // cpu | cuda | fake | faulty-cuda (cuda with injected faults); "": cuda where a device is present, else cpu
  std::string backend;
  uint32_t gpus = 0;                    // 0: every CUDA device (cuda), else 1
  StageAlone stage_alone = StageAlone::none;
  FakeDeviceOptions fake;               // faults of fake and faulty-cuda, delays of fake
};

// Whether the backend's workers run on CUDA devices (cuda, faulty-cuda); whether it injects the
// faults of Settings::fake.faults (fake, faulty-cuda).
bool uses_cuda(std::string_view backend);
bool injects_faults(std::string_view backend);

// The machine the job runs on, as its trace's sidecar records it: its cores, the host memory
// available (0 when unknown) and its CUDA devices, each set.
using MachineFacts = zkpipe::trace::MachineFacts;
MachineFacts machine_facts();

using zkpipe::policy::JobSizes;  // the sizes the defaults depend on

// Host bytes one GPU worker holds all job long: the witness of the partition it proves and its
// splits (scalars and indices, see groth16::split_for_proof), plus, on CUDA, the pinned copy
// of the splits its witness is staged from (pinned staging only), or the staged a/b/c where the
// backend computes in host memory.
uint64_t worker_host_bytes(const JobSizes& sizes, std::string_view backend, Staging staging);

// The job's shape for the policy on `backend`: its sizes and what each worker holds.
zkpipe::policy::JobShape job_shape(const JobSizes& sizes, std::string_view backend);

// Every setting chosen (policy::resolve_job_settings, with the backend's GPUs and the command
// line's names); throws zk::Error naming the option.
Settings resolve_settings(Settings requested, const JobSizes& sizes, const MachineFacts& machine);

// Fits the resolved settings' workers and key into each GPU's memory (policy::plan_device_memory)
// for a backend whose workers hold `footprint`: resolves device_budget_bytes (from
// `device_free_bytes`, the smallest free memory of the job's GPUs, or the fake device's size; 0:
// unknown, no limit), then lowers workers_per_gpu or streams the key (srs_residency pinned-host)
// where the plan says so, re-resolving the rest. Throws zk::Error naming the sizes when even one
// worker cannot fit. The plan's `change` says what it changed (empty when nothing).
zkpipe::policy::DevicePlan fit_device_memory(Settings& settings, const Settings& requested, const JobSizes& sizes,
                                            const MachineFacts& machine, const zkpipe::policy::DeviceFootprint& footprint,
                                            uint64_t device_free_bytes);

std::string describe(const Settings& settings);
// The settings as the trace's sidecar states them (what the run made of them aside).
zkpipe::trace::RunSettings run_settings(const Settings& settings);

}  // namespace zk::pipeline
