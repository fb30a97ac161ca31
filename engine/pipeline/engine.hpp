// engine.hpp — the proving pipeline: a Job's partitions flow through synthesis threads (writing
// a/b/c straight into a pinned slab or pageable memory), staging copies and GPU workers (W per
// GPU, each with its own backend: streams and device buffers), every decision taken by the shared
// SchedulingPolicy (admission under the memory budget and in-flight limit, slab leases, which
// worker takes which partition, retries, worker death), driven here by real threads and time.
//
// Promises:
// - only the GPU-compute section (quotient, MSMs, assembly) is serialized per GPU, so one worker's
//   copy and host work overlap another's kernels;
// - every large host allocation holds a MemoryBudget reservation; the pool never leases a slab
//   twice; a failed pinned allocation falls back to pageable staging with a warning;
// - with one pinned pool per GPU, a partition is copied only by a worker of the GPU whose pool
//   holds its slab (anything else is a broken invariant that ends the job);
// - a failed attempt (device error, failed copy, synthesis error, proof that does not verify) is
//   retried up to settings.retry_limit times, then reported in JobReport::failed; a worker whose
//   device is lost (DeviceLost, or a sticky CUDA error) stops and its partition goes to the others,
//   uncharged; when no worker is left, every remaining partition is reported failed, none lost;
// - every proof is verified before the sink sees it, and the sink sees each proved partition
//   exactly once (serialized, from a worker thread);
// - every phase of every attempt is a span of the shared trace schema (source measured).
// run_job() throws zk::Error for settings that cannot work and rethrows a sink's exception.
#pragma once
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "engine/groth16/prover.hpp"
#include "engine/pipeline/job.hpp"
#include "engine/pipeline/settings.hpp"
#include "faults/fault_injector.hpp"
#include "trace/invariants.hpp"
#include "trace/summary.hpp"
#include "trace/trace.hpp"

namespace zk::pipeline {

namespace trace = zkpipe::trace;

struct ProvedPartition {
  uint32_t partition = 0;
  groth16::Proof proof;
  std::vector<Fr> public_inputs;
};
using ProofSink = std::function<void(const ProvedPartition&)>;

struct PartitionFailure {
  uint32_t partition = 0;
  uint32_t failed_attempts = 0;
  std::string last_error;
};

struct JobReport {
  Settings settings;  // as resolved; staging pageable after a failed pinned allocation
  std::string staging_memory;  // what the copies read: "pinned" or "pageable" memory
  MachineFacts machine;
  uint32_t partitions = 0, proved = 0;
  std::vector<PartitionFailure> failed;
  std::vector<std::string> workers_lost;
  uint32_t failed_attempts = 0;
  std::vector<uint32_t> failed_attempts_by_partition;  // indexed by partition
  zkpipe::faults::FaultCounts faults_injected;          // by fake or faulty-cuda (zero for other backends)
  double idle_h2d_gbps = 0;         // one partition's a/b/c staged before the job, nothing else running
  std::string idle_h2d_from;        // "pinned" or "pageable" memory
  double pool_allocation_s = 0;
  uint32_t pool_slabs_leased_max = 0;                  // all pools together
  std::vector<uint32_t> pool_slabs_leased_max_by_pool;  // one pool per host, or one per GPU
  uint64_t budget_reserved_max_bytes = 0;
  uint64_t partition_reserved_max_bytes = 0;  // the policy's high-water mark of partition bytes
  zkpipe::policy::DeviceFootprint device_footprint;  // what the backend holds on a device
  uint64_t device_bytes_planned = 0;          // per GPU, by the device-memory plan (0: the backend holds none)
  std::vector<zkpipe::policy::FixedBaseTable> fixed_bases;  // the fixed-base tables on each GPU
  zkpipe::policy::PolicySettings admission;   // the policy's: partitions admitted against budget - key - workers
  double wall_s = 0;
  trace::Trace trace;
  trace::TraceSummary summary;
};

struct RunOptions {
  std::string run_name = "engine";
  std::FILE* log = stdout;  // settings, warnings and progress; nullptr: silent
};

JobReport run_job(const Job& job, const Settings& requested, const ProofSink& sink, const RunOptions& options = {});

// Writes trace.csv, its sidecar trace.json (settings, machine facts, versions: what calibration
// reads) and trace.perfetto.json (open in ui.perfetto.dev) into `dir`.
void write_trace_files(const std::filesystem::path& dir, const Job& job, const JobReport& report);

// The closing block printed after a job: summary figures and per-phase medians.
std::string format_report(const JobReport& report);

// What the shared trace checker (trace::check_invariants) expects of this job's measured trace:
// the report's counts and limits, proofs that may be rejected (the engine verifies each one and
// retries a proof that fails), and the pool's slabs where every copy was staged pinned.
trace::RunExpectations trace_expectations(const JobReport& report);

}  // namespace zk::pipeline
