// Contract: the engine's item conventions translated to the model's. Measured traces (the engine)
// and simulated ones (the model) share the schema but count some GPU items differently:
//
//   phase        engine (measured)                           model (simulation.cpp, phase_items)
//   ntt, msm_h   the domain (2^k above the constraints)      the partition's constraints
//   batch_add    one span per MSM (A, B1, L, B2): the        one span per partition: the
//                1-scalars of that MSM                       1-scalars
//   msm_X        the tail MSM of X after its batch           the whole MSM: the non-zero scalars
//                addition: scalars neither 0 nor 1
//
// in_model_convention rewrites a measured trace so that a cost fitted against its items is the
// cost the model computes from a workload's shares: per partition attempt (a worker's kernels of
// one partition; an attempt begins where its first phase repeats: the engine's ntt), ntt and msm_h items become the partition's
// constraints (its h2d or synth items), the batch_add spans fold into one (start of the first,
// durations summed, items: the largest, the 1-scalars over all of z), and every msm_X's items
// become the attempt's 1-scalars + significant scalars (over all of z: msm_a's). Spans that are
// not GPU kernels are kept as they are. Simulated traces need no translation.
//
// compute_section_idle_s: per attempt (either convention), the seconds between its first kernel's
// start and its last kernel's end when none of its kernels ran: host work inside the section.
//
// witness_split_s: the witness_split spans' durations where the trace has them (schema version 2);
// in version 1 traces, per attempt (either convention) whose GPU ran no other partition's kernels or
// in-section assembly between the end of its copy (the partition's last h2d before its first
// kernel) and its first kernel, the seconds between the two: the worker's host work before it
// takes the compute section (the engine's witness split), where it did not also wait for the GPU.
//
// measured_shape reads the same quantities back as a workload: constraints and the shares of
// 1-scalars and of 0-scalars (medians over attempts), which a scenario's [workload] takes, and the
// bytes of each attempt's witness upload (the median of the h2d spans without items: version 2
// traces; 0 in version 1, whose MSMs uploaded their scalars inside their kernel spans).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "trace/trace.hpp"

namespace zkpipe::model {

trace::Trace in_model_convention(const trace::Trace& measured);

std::vector<double> compute_section_idle_s(const trace::Trace& spans);
std::vector<double> witness_split_s(const trace::Trace& spans);

struct WorkloadShape {
  std::uint64_t constraints = 0;
  double one_scalar_share = 0;   // 1-scalars / constraints
  double zero_scalar_share = 0;  // 1 - non-zero scalars / constraints, within [0, 1 - one share]
  std::uint64_t witness_upload_bytes = 0;
};

// The shape of a measured trace's partitions; nullopt when it has no GPU attempt with an msm_a
// span and a partition size (h2d or synth items).
std::optional<WorkloadShape> measured_shape(const trace::Trace& measured);

}  // namespace zkpipe::model
