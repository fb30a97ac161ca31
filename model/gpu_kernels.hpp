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
// the circuits measured lies within a few points of the end.
#pragma once

#include <cstdint>
#include <map>
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
};

// One MSM's scalars as the witness split sorts them.
struct MsmScalars {
  std::uint64_t ones = 0;
  std::uint64_t significant = 0;  // neither 0 nor 1
};

MsmScalars scalars_of_z(const Workload& workload);        // A, B1, B2
MsmScalars scalars_of_witness(const Workload& workload);  // L

std::vector<GpuKernel> gpu_kernels(const Workload& workload, const std::map<trace::Phase, PhaseCost>& costs);

}  // namespace zkpipe::model
