// Contract: `zkpipe import cuzk`: the logs of Curio's cuzk daemon (formats in cuzk_log.hpp) to a
// measured trace in the shared schema with its sidecar, for `calibrate`, `report` and `compare`.
// Logs are read in the order given as one daemon run (its stderr and stdout as one file or two,
// or one log in parts); only the trace's figures, never the logs, are kept in memory.
//
// What each span is (times: TIMELINE's offsets, ms since the engine started; CUZK durations laid
// out from them):
//   synth          SYNTH_START..SYNTH_END, on "cpu:<lane>": lanes are concurrent syntheses, the
//                  first free lane taken (cuzk does not log its synthesis workers)
//   witness_split  GPU_PICKUP .. the call asks for the GPU mutex (entry + pre_lock_cpu_ms), on the
//                  worker's host lane "cpu:gpu<g>w<i>": the host work before the compute section,
//                  what the model's split step costs
//   ntt, msm_h     per circuit, from CUZK_NTT_H: ntt = ntt_kernels + coset_intt_sync (the a/b/c
//                  uploads included), msm_h = msm_invoke, on "gpu<g>:w<i>", starting when the mutex
//                  is held (entry + pre_lock_cpu_ms + mutex_wait_ms); d_b_alloc, msm_init, msm_dtor
//                  and barrier_wait_ms (the GPU waiting for prep_msm on the CPU) are idle time
//                  inside the section
//   batch_add, tail_msm   batch_add_ms, tail_msm_ms on the GPU after the barrier
//   msm_b2         b_g2_msm_ms on the worker's host lane (supraseal runs the B G2 MSM on the CPU),
//                  after setup_to_split_ms + prep_msm_ms: a GPU phase on a host lane keeps no GPU
//                  busy (trace::is_gpu_kernel)
//   assemble       from the later of the section's release and b_g2's end to GPU_END: the proof's
//                  epilogue in cuzk's finalizer
// The GPU queue (GPU_QUEUE..GPU_PICKUP) and the mutex wait are gaps, as the model's traces have
// them; both are in the sidecar per partition, with cuzk's gpu_ms, which counts the mutex wait
// and the joins and so overstates GPU busy time. GPU busy comes from the kernel phases alone.
//
// CUZK lines name no partition: they are attributed by order on stderr. A call's lines begin
// after its GPU_START (calls enter supraseal in GPU_START order: split_vectors lines, and the
// prep_msm and b_g2 lines of its CPU thread, are taken in that order), the mutex_wait line opens
// its section and mutex_held closes it; the kernel lines between belong to the one open section.
// Exact for one GPU with cuzk's default two workers per GPU (the mutex has at most one waiter).
// Sections open at once are of several GPUs, whose lines cannot be told apart: those calls get
// no kernel spans (counted). A section computed to begin before the previous one on its GPU
// ended (millisecond rounding) begins at that end. GPU_TIMING spawn_blocking lines (stdout)
// give each call's spawn_to_enter_ms, matched by worker and partition in order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuzk_log.hpp"
#include "policy/scheduling_policy.hpp"
#include "trace/sidecar.hpp"
#include "trace/trace.hpp"

namespace zkpipe::model::cuzk {

struct ImportOptions {
  std::string run = "cuzk";                    // the trace's run column
  std::optional<std::uint64_t> constraints;    // per partition; default: the log's capacity hint
  std::optional<policy::Staging> staging;      // default: pinned where the log shows pinned synthesis
  double pcie_h2d_gbps = 0;                    // the host's link (cuzk logs no copies of its own)
  std::optional<std::uint32_t> cores;          // the host's cores, for calibration's synthesis shares
  std::vector<std::string> sources;            // the logs' names, for the sidecar
};

struct ImportStats {
  std::size_t partitions = 0, jobs = 0, gpu_calls = 0, calls_with_kernels = 0;
  std::map<std::string, std::size_t> calls_without_kernels;  // reason -> calls
  std::uint32_t gpus = 0, workers_per_gpu = 0, synthesis_lanes = 0;
  std::size_t workers_unannounced = 0;  // no "pipeline GPU worker started" line: put on gpu0
  double kernel_busy_s = 0, cuzk_gpu_s = 0;  // over the calls with kernel spans
  double mutex_wait_s = 0, gpu_queue_s = 0;
  double kernel_gpu_utilization = 0, timeline_gpu_utilization = 0;  // as trace::summarize computes it
  double sections_shifted_ms_max = 0;
  std::optional<std::uint64_t> constraints;
  std::string constraints_note;  // why the synthesis spans carry no constraints, if they do not
};

struct ImportResult {
  trace::Trace spans;
  trace::Sidecar sidecar;
  LineCounts lines;
  ImportStats stats;
};

// Reads the logs; throws std::runtime_error naming the logs when they hold no cuzk line or no
// span could be made of them, or a log cannot be read.
ImportResult import_logs(const std::vector<std::filesystem::path>& logs, ImportOptions options);
// The same from texts in memory (each one log).
ImportResult import_texts(const std::vector<std::string_view>& logs, const ImportOptions& options);

std::string format_import_summary(const ImportResult& result);
// DIR/trace.csv, DIR/trace.json (sidecar) and DIR/trace.perfetto.json, each written atomically.
void write_import(const std::filesystem::path& dir, const ImportResult& result);

}  // namespace zkpipe::model::cuzk
