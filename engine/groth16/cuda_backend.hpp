// cuda_backend.hpp — the prover's CUDA backend: the quotient's NTTs (kernels/ntt/ntt_cuda.cuh)
// and the G1/G2 MSMs and batch additions (kernels/msm/pippenger_cuda.cuh) on one GPU.
//
// prepare(pk, fixed_bases) gives the backend the device's copy of the key's point arrays (a, b1,
// l, h, b2): one per CUDA context (the device's, or a worker's own: faulty-cuda's), uploaded by
// the first backend there to prepare that key, shared by the others, freed with the last; later
// calls whose bases are one of those arrays use it. The arrays named in fixed_bases are held as
// fixed-base tables of the sets named there (msm::CudaFixedBases, built there by that first
// backend; the table's first row is the array), and every MSM over them runs over the table;
// device_footprint() offers each array's tables of one and of two sets with their bytes and
// estimated build time and saving, for the device-memory plan. Other bases (all of them
// without prepare(): the engine's pinned-host SRS residency) stream from the host in chunks of
// `stream_chunk_points` through two device buffers, the next chunk's copy overlapping this
// chunk's MSM (asynchronous where the host array is page-locked); index lists must then be
// ascending, as the witness split makes them.
// The kernels' workspaces (NTT tables, MSM buckets, a witness's digits) are one per context too,
// shared by its backends: their kernel calls take turns (the engine's compute section already
// keeps them apart). prepare() allocates them, and this backend's quotient, at the sizes the
// key's proofs take, so that no proof allocates device memory (an allocation waits for all of the
// device's work, another worker's copies included). What a backend stages is its own: the
// quotient's inputs travel once, through stage_quotient_inputs(); a proof's witness splits once,
// through stage_witness(): copied into a page-locked buffer (then one copy on the witness copy
// stream) or straight from the splits' pageable memory, as asked; later calls on those splits
// read the device copy, and the split of all of z is decomposed into digits and sorted once for
// A, B_G1 and B_G2 where the bases are prepared. reserve_witness_staging() allocates the device
// witness buffer for the key's largest splits, and the host block the splits are split into
// (witness_split_memory()), page-locked where they are to be staged from pinned memory (without
// it, the first stage_witness() does). Scalars and index lists of any other call travel with it.
// The constructor sets the blocking-sync flag of the current device's primary context (a context
// of the caller's own keeps its flags), so that a thread waiting for the device sleeps rather
// than spin a core. The constructor throws zk::Error when no CUDA device is present;
// CUDA failures throw zk::cuda::CudaError naming the call, file and line. One backend is not
// thread-safe (one stream); the key passed to prepare() must outlive it.
// The staging copy's watchdog (off unless set_copy_watchdog() arms it) gives up on a copy of a, b,
// c that is not done in time and throws CopyStalled; its hooks are the seam fault injection uses
// (engine/pipeline/faulty_cuda_backend.hpp).
// This header needs no CUDA headers, so any code (the backend registry) can include it.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "engine/groth16/backend.hpp"
#include "engine/util/error.hpp"

struct CUstream_st;  // cudaStream_t's pointee

namespace zk::groth16 {

// The staging copy made no progress before its watchdog gave up.
class CopyStalled : public Error {
 public:
  using Error::Error;
};

// The staging copy's watchdog, which watches from a thread of its own (a copy from pageable memory
// can block its caller): a copy of a, b, c not done `timeout_s` after it began has stalled; the
// watchdog then calls `on_stall` (from its thread), the backend still waits for the copy to end,
// so that it never reads the caller's buffers after the call, and throws CopyStalled.
struct CopyWatchdog {
  double timeout_s = 0;  // 0: no watchdog
  // Runs on the copy's stream before each staging copy is enqueued there (fault injection stalls it here).
  std::function<void(CUstream_st*)> before_copy;
  // Unblocks a stalled copy (fault injection opens its gate here); thread-safe.
  std::function<void()> on_stall;
};

class CudaBackend final : public ProverBackend {
 public:
  static constexpr size_t default_stream_chunk_points = zkpipe::policy::default_stream_chunk_points;
  explicit CudaBackend(size_t stream_chunk_points = default_stream_chunk_points);
  ~CudaBackend() override;
  std::string name() const override { return "cuda"; }
  std::string prepare(const ProvingKey& pk, std::span<const zkpipe::policy::FixedBaseTable> fixed_bases) override;
  // The key's bases; the NTT, G1 and G2 MSM and witness-digit workspaces; this backend's quotient
  // and witness buffers; and, with the bases streamed, its two chunk buffers per curve, their
  // index list and G2's digits of a chunk.
  zkpipe::policy::DeviceFootprint device_footprint(const ProvingKey& pk, const MsmScalarCounts& scalars) const override;
  std::string reserve_witness_staging(const ProvingKey& pk, WitnessHostMemory from) override;
  void quotient_evaluations(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c,
                            const ntt::Domain& domain) override;
  // Copies a, b, c to the device (returns when the host buffers may be reused); the quotient
  // then runs there and stays there as the scalars of the H MSM.
  void stage_quotient_inputs(std::span<const Fr> a, std::span<const Fr> b, std::span<const Fr> c) override;
  void staged_quotient_evaluations(const ntt::Domain& domain) override;
  G1 staged_quotient_msm(std::span<const G1Affine> bases) override;
  std::span<std::byte> witness_split_memory() override;
  StagedWitness stage_witness(const ProofSplits& splits, WitnessHostMemory from) override;
  std::vector<BackendCopy> take_copies() override;
  void set_copy_watchdog(CopyWatchdog watchdog);
  G1 msm(std::span<const G1Affine> bases, std::span<const uint32_t> indices,
         std::span<const Fr> scalars) override;
  G2 msm(std::span<const G2Affine> bases, std::span<const uint32_t> indices,
         std::span<const Fr> scalars) override;
  G1 sum(std::span<const G1Affine> bases, std::span<const uint32_t> indices) override;
  G2 sum(std::span<const G2Affine> bases, std::span<const uint32_t> indices) override;

 private:
  void release_staged_witness(uint64_t staging) noexcept override;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zk::groth16
