// Contract: the kernels of one partition's compute section as the model runs them, each with the
// items its span records and the seconds its phase's calibrated cost gives those items. The items
// mean what the engine's spans mean (engine/pipeline/engine.cpp, engine/groth16/prover.cpp), so
// measured and simulated traces count alike and calibration fits each cost from either as it is:
//   ntt, msm_h   the evaluation domain (Workload::domain_size: 2^k above constraints + public inputs)
//   batch_add    the 1-scalars of one MSM, added by batch addition
//   msm_X        the tail MSM of X after its batch addition: the scalars neither 0 nor 1
// A, B1 and B2 run over all of z = (1, public inputs, witness), L over the witness only. The
// workload's shares are of z's scalars (Workload::z_length); z's ONE is a 1-scalar and its public
// inputs are 1, 0 or neither as the workload says (public_inputs_one, public_inputs_zero; by
// default neither), so L has ONE and those 1-scalars fewer, and the other public inputs' significant
// scalars fewer.
//
// The order is the engine's (prove_staged after the quotient's NTTs): ntt, msm_h, then per MSM A,
// B1, L, B2 its batch addition and its tail MSM. A calibration with a tail_msm cost has supraseal's
// order instead (what `zkpipe import cuzk` measures): ntt, msm_h, one batch addition of the four
// MSMs' 1-scalars, tail_msm (the tail MSMs of A, B1 and L together), then msm_b2. A kernel whose
// phase has no cost is not run.
//
// Each kernel also says which of the key's points it reads, cut into the chunks in which the
// engine's CUDA backend streams them where the key is not on the device (srs_residency
// pinned-host: DeviceBases::for_each_chunk, Workload::stream_chunk_points a chunk, the last of
// each MSM's bases shorter): msm_h the domain's H points; the batch addition and the tail MSM
// of A, B1 and L their G1 points, of B2 its G2 points (each streams them again); in supraseal's
// order the bases of the MSMs each kernel covers. A kernel reads an MSM's bases only where it has
// scalars for it, and then all of them: the engine streams up to the last selected base, which in
// the circuits measured lies within a few points of the end. The engine runs such a kernel once
// per chunk, so each chunk costs the phase's stream_chunk_s on top of its share (by points) of
// the phase's cost; streamed_kernel_s is that kernel's timeline as the model runs it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "scenario.hpp"

namespace zkpipe::model {

// A chunk of the key's points that a streaming kernel copies before it works on them.
struct BaseChunk {
  std::uint64_t points = 0;
  std::uint64_t bytes = 0;
};

struct GpuKernel {
  trace::Phase phase;
  std::uint64_t items = 0;
  double seconds = 0;
  std::vector<BaseChunk> base_chunks;  // the key's points it reads, in order (none: it reads none)
  std::uint64_t base_points = 0;       // their sum
  double chunk_s = 0;                  // what each chunk adds where the key streams (none read: 0)

  // Chunk `chunk`'s work where the key streams: its share (by points) of the kernel's seconds,
  // and the chunk's own cost.
  double chunk_work_s(std::size_t chunk) const {
    return seconds * double(base_chunks[chunk].points) / double(base_points) + chunk_s;
  }
};

// What each chunk of a streamed key adds to a kernel of `phase` where the calibration gives no
// stream_chunk_s: `zkpipe calibrate`'s fit of the H200's streamed 2^24 poseidon-merkle run
// (scenarios/calibration/traces/stream24-h200-20261203, after-pinned-host: 2^22-point chunks,
// 1.14 GPU s a partition) against its twin with the key on the device (after-pinned, 0.59 s):
// msm_h 10.9 ms, A, B1 and L 12.6-14.1 ms a G1 chunk, B2 29.2 ms a G2 chunk, a batch addition
// 7.8 ms (one cost at which G1's three and G2's one last what they did together: G2's waits for
// its copies), tail_msm (supraseal's A, B1 and L together, never measured streaming) A's. That is Pippenger's fixed work per call (digits,
// sort, bucket reduction, the windows' sum, the result's download), the chunk's index list
// rebased and uploaded, and the host's check of the indices before the first chunk (3.6-5.7 ms a
// kernel), spread over the chunks. The ntt reads no key: 0.
double default_stream_chunk_s(trace::Phase phase);

// The seconds a kernel over streamed bases lasts where its worker has the GPU and a copy engine to
// itself, as CostedWork runs it (the engine's DeviceBases::for_each_chunk): chunk 0's copy, then
// each chunk's work (work_s[c]) once it is copied and the work before it is done, chunk c + 1's
// copy (copy_s[c + 1]) starting with chunk c's work. Calibration inverts it on measured copies.
double streamed_kernel_s(std::span<const double> work_s, std::span<const double> copy_s);

// One MSM's scalars as the witness split sorts them.
struct MsmScalars {
  std::uint64_t ones = 0;
  std::uint64_t significant = 0;  // neither 0 nor 1
};

MsmScalars scalars_of_z(const Workload& workload);        // A
MsmScalars scalars_of_b(const Workload& workload);        // B1, B2: z less what is absent from B
MsmScalars scalars_of_witness(const Workload& workload);  // L

std::vector<GpuKernel> gpu_kernels(const Workload& workload, const std::map<trace::Phase, PhaseCost>& costs);

}  // namespace zkpipe::model
