// Contract: reads the log lines of Curio's cuzk proving daemon (extern/cuzk in
// github.com/filecoin-project/curio) into typed records, one line at a time, keeping no more than
// a torn line's head. The formats, each written by the source named (read at curio e0294b0f):
//
//   stderr, eprintln! (cuzk-core/src/engine.rs, timeline_event):
//     TIMELINE,{offset_ms},{event},{job_id},{detail}
//       offset_ms: ms since the engine started; detail: key=value pairs joined by ',' or "monolithic":
//       SYNTH_START  partition={p} | kind={proof kind}
//       SYNTH_END    partition={p},synth_ms={n} | synth_ms={n}
//       GPU_QUEUE    partition={p} | monolithic
//       GPU_PICKUP   worker={w}[,partition={p}]
//       GPU_START    worker={w}[,partition={p}]            (before the GPU mutex is asked for)
//       GPU_END      worker={w}[,partition={p}],gpu_ms={n}  (after b_g2's join and the proof's epilogue)
//   stderr, fprintf (supraseal-c2/cuda/groth16_cuda.cu), in the order one proof's call prints them:
//     CUZK_TIMING: split_vectors_ms=%ld setup_to_split_ms=%ld
//     CUZK_TIMING: prep_msm_ms=%ld                                 (CPU thread)
//     CUZK_TIMING: b_g2_msm_ms=%ld num_circuits=%zu                (CPU thread)
//     CUZK_TIMING: pre_lock_cpu_ms=%ld mutex_wait_ms=%ld           (printed once the GPU mutex is held)
//     CUZK_TIMING: gpu_tid=%zu ntt_msm_h_ms=%ld
//     CUZK_TIMING: gpu_tid=%zu barrier_wait_ms=%ld                 (the GPU waits for prep_msm)
//     CUZK_TIMING: gpu_tid=%zu batch_add_ms=%ld
//     CUZK_TIMING: gpu_tid=%zu tail_msm_ms=%ld gpu_total_ms=%ld
//     CUZK_TIMING: mutex_held_ms=%ld total_start_fn_ms=%ld         (before the mutex is released)
//     CUZK_TIMING: async_dealloc_ms=%ld, set pool release threshold to MAX on gpu %d,
//                  d_a_cache allocated %zu MiB on gpu %d            (no phase: informational)
//   stderr, fprintf (supraseal-c2/cuda/groth16_ntt_h.cu, execute_ntt_msm_h), per circuit:
//     CUZK_NTT_H: d_b_alloc=%ldms ntt_kernels=%ldms coset_intt_sync=%ldms msm_init=%ldms msm_invoke=%ldms msm_dtor=%ldms total=%ldms
//   stdout, tracing-subscriber 0.3 fmt() with targets (cuzk-daemon/src/main.rs), ANSI colours or not:
//     {RFC 3339 time, microseconds}Z {level, 5 wide} [{span}{{fields}}:]... {target}: {message} {key=value ...}
//     messages read: "GPU_TIMING spawn_blocking prove_start" (worker_id, partition=Some(p)|None,
//     spawn_to_enter_ms, prove_start_ms), "pipeline GPU worker started" (worker_id, gpu, sub_id),
//     "cached synthesis capacity hint" and "attempting pinned memory synthesis" (num_constraints);
//     any other GPU_TIMING or FIN_TIMING message is informational (engine.rs, pipeline.rs).
//
// Lines are torn: eprintln! writes each piece of a TIMELINE line with its own write(2), so a
// C++ fprintf line (one write) or a stdout line, where both streams go to one file, can land
// inside it. A TIMELINE line with another line's start inside keeps its head; the embedded line
// is read on its own, and the next line that starts no record is tried as the head's
// continuation (rejoined when the two make a TIMELINE line, both dropped otherwise). A last
// line without its newline is partial and dropped: its numbers may be cut short.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace zkpipe::model::cuzk {

struct TimelineRecord {
  double offset_ms = 0;
  std::string event;   // SYNTH_START, SYNTH_END, GPU_QUEUE, GPU_PICKUP, GPU_START, GPU_END (or another)
  std::string job_id;
  std::map<std::string, std::string> detail;  // "monolithic" reads as {monolithic: ""}
};

// A CUZK_TIMING or CUZK_NTT_H line: its key=value pairs (an "ms" suffix dropped), or its text
// when it has none.
struct KernelTimingRecord {
  bool ntt_h = false;  // CUZK_NTT_H
  std::map<std::string, std::int64_t> values;
  std::string text;
};

struct TracingRecord {
  std::string message;
  std::map<std::string, std::string> fields;
};

using Record = std::variant<TimelineRecord, KernelTimingRecord, TracingRecord>;

// What the consumer did with a record.
enum class Disposition { used, informational, unattributed, malformed };

struct LineCounts {
  std::uint64_t read = 0;
  std::uint64_t used = 0;
  std::uint64_t informational = 0;  // cuzk lines zkpipe has no phase for
  std::uint64_t unattributed = 0;   // cuzk lines whose partition could not be told
  std::uint64_t malformed = 0;      // began like a cuzk line but did not parse, or lacked a field
  std::uint64_t torn_rejoined = 0;  // TIMELINE lines put back together
  std::uint64_t torn_dropped = 0;   // heads and fragments that made no line
  std::uint64_t partial = 0;        // a file's last line, cut off before its newline
  std::uint64_t other = 0;          // not cuzk's: other log lines, blank lines

  std::uint64_t cuzk_lines() const { return used + informational + unattributed + malformed + torn_rejoined + torn_dropped; }
};

class LogReader {
 public:
  using Consumer = std::function<Disposition(const Record&)>;
  explicit LogReader(Consumer consumer) : consumer_(std::move(consumer)) {}

  // One line without its newline; `terminated` is false for a file's last line without one.
  void read_line(std::string_view line, bool terminated = true);
  // A file ends: a torn head still waiting is dropped.
  void end_of_file();
  const LineCounts& counts() const { return counts_; }

 private:
  void read_whole_line(std::string_view line);
  bool continue_torn_line(std::string_view line);
  void read_timeline_line(std::string_view line);
  void consume(const std::optional<Record>& record);

  Consumer consumer_;
  LineCounts counts_;
  std::optional<std::string> torn_head_;
};

// Parsers of single, whole lines (nullopt: not of that kind, or malformed).
std::optional<TimelineRecord> parse_timeline(std::string_view line);
std::optional<KernelTimingRecord> parse_kernel_timing(std::string_view line);
std::optional<TracingRecord> parse_tracing(std::string_view line);  // ANSI escapes already removed
std::string without_ansi_escapes(std::string_view line);
// The whole of `text` as a decimal integer, or nullopt.
std::optional<std::int64_t> parse_integer(std::string_view text);

}  // namespace zkpipe::model::cuzk
