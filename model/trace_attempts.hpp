// Contract: what calibration and validation read from a trace's GPU attempts (measured or
// simulated: both count items as the engine does, gpu_kernels.hpp). An attempt is one worker's
// kernels of one partition, in start order; another begins where one of its kernels repeats
// (batch_add aside: it runs once per MSM).
//
// compute_section_idle_s: per attempt, the seconds between its first kernel's start and its last
// kernel's end when none of its kernels ran: host work inside the section.
//
// witness_split_s: the witness_split spans' durations where the trace has them (schema version 2);
// in version 1 traces, per attempt whose GPU ran no other partition's kernels or in-section
// assembly between the end of its copy (the partition's last h2d before its first kernel) and its
// first kernel, the seconds between the two: the worker's host work before it takes the compute
// section (the engine's witness split), where it did not also wait for the GPU.
//
// measured_shape reads an engine trace's partitions back as a workload: the constraints (the
// items of the partition's h2d or synth), the shares among z's `variables` scalars (the sidecar's
// scenario.variables; 0: as many as the constraints) of its 1-scalars (the largest batch_add: an
// MSM over all of z) and of its 0-scalars (neither those nor msm_a's significant scalars), medians
// over attempts, which a scenario's [workload] takes, and the bytes of each attempt's witness
// upload (the median over attempts of the last h2d span without items before the attempt's first
// kernel: version 2 traces; a streamed key's chunks, also without items, lie inside the kernels;
// 0 in version 1, whose MSMs uploaded their scalars inside their kernel spans), and how many of
// its `public_inputs` (the sidecar's scenario.public_inputs) are 1 and 0: z's 1- and significant
// scalars that the witness's MSM (L: the batch_add before msm_l, and msm_l) lacks, ONE aside;
// medians over attempts with an msm_l, none where there is none.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trace/trace.hpp"

namespace zkpipe::model {

std::vector<double> compute_section_idle_s(const trace::Trace& spans);
using PartitionKey = std::pair<std::string, std::uint32_t>;  // run, partition
// Per partition, its host-to-device copies in trace order; `itemless_only`: only those that moved
// no a/b/c (a streamed key's chunks, the witness's upload).
std::map<PartitionKey, std::vector<const trace::Span*>> copies_by_partition(const trace::Trace& spans,
                                                                           bool itemless_only = false);
std::vector<double> witness_split_s(const trace::Trace& spans);

struct WorkloadShape {
  std::uint64_t constraints = 0;
  std::uint64_t variables = 0;   // z's length, as given (0: the constraints)
  double one_scalar_share = 0;   // z's 1-scalars / its length
  double zero_scalar_share = 0;  // 1 - non-zero scalars / z's length, within [0, 1 - one share]
  double b_absent_one_share = 0;          // z's 1-scalars that B1 leaves out / z's length
  double b_absent_significant_share = 0;  // and its significant scalars
  std::uint64_t witness_upload_bytes = 0;
  std::uint32_t public_inputs_one = 0;   // public inputs equal to 1
  std::uint32_t public_inputs_zero = 0;  // and to 0 (the others are significant)
};

// The shape of a measured trace's partitions; nullopt when it has no GPU attempt with an msm_a
// span and a partition size (h2d or synth items).
std::optional<WorkloadShape> measured_shape(const trace::Trace& measured, std::uint64_t variables = 0,
                                           std::uint32_t public_inputs = 0);

}  // namespace zkpipe::model
