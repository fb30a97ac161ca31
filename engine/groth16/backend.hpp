// backend.hpp — the device seam of the Groth16 prover: the heavy operations (the quotient's
// transforms and the MSMs) behind one interface, implemented on the CPU (cpu_backend) and on
// CUDA GPUs. The prover's orchestration, scalar split and assembly are shared by all backends.
//
// Contract: bases are affine points owned by the caller (the proving key) and outlive the call;
// `indices`, when not empty, selects which bases take part (in order), so the witness split into
// zero / one / significant scalars needs no copies of the bases. Implementations may keep device
// copies of a key's bases between calls (prepare()), and of a proof's witness splits
// (stage_witness()), which later msm() and sum() calls on those very splits then use.
#pragma once
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/groth16/keys.hpp"
#include "engine/groth16/witness_split.hpp"
#include "kernels/ntt/domain.hpp"
#include "policy/device_memory.hpp"

namespace zk::groth16 {

using bls12_381::Fr;
using bls12_381::G1;
using bls12_381::G2;

// Where the host side of a staged witness is copied from: the backend's own page-locked buffer
// (the splits split into it, see witness_split_memory(), or copied into it first; then one copy
// at the link's rate) or the splits' own pageable memory (copied through the driver's bounce
// buffer). The engine follows its staging setting, so pinned and pageable staging differ for the
// MSM scalars as they do for a/b/c.
enum class WitnessHostMemory { pinned, pageable };

class ProverBackend;

// A host-to-device copy a backend made inside one of its calls rather than at the caller's
// request (the key's points streamed chunk by chunk into an MSM), placed on the steady clock.
struct BackendCopy {
  std::chrono::steady_clock::time_point start, end;
  uint64_t bytes = 0;
};

// What stage_witness() did: the bytes it moved host-to-device (0 where the backend computes in
// host memory). While it lives and until the next stage_witness(), msm() and sum() calls whose
// scalars and index lists are the staged splits' own vectors use the backend's copies;
// destroying it ends that (so a later split that reuses the same addresses is never mistaken for
// the staged one). Move-only; the staged ProofSplits must outlive it unchanged.
class StagedWitness {
 public:
  StagedWitness() = default;
  // `staging` tells the backend's stagings apart (see release_staged_witness()).
  StagedWitness(ProverBackend* backend, uint64_t staging, uint64_t h2d_bytes)
      : backend_(backend), staging_(staging), h2d_bytes_(h2d_bytes) {}
  StagedWitness(StagedWitness&& other) noexcept
      : backend_(std::exchange(other.backend_, nullptr)), staging_(other.staging_), h2d_bytes_(other.h2d_bytes_) {}
  StagedWitness& operator=(StagedWitness&&) = delete;
  StagedWitness(const StagedWitness&) = delete;
  ~StagedWitness();
  uint64_t h2d_bytes() const { return h2d_bytes_; }

 private:
  ProverBackend* backend_ = nullptr;
  uint64_t staging_ = 0;
  uint64_t h2d_bytes_ = 0;
};

class ProverBackend {
 public:
  virtual ~ProverBackend() = default;
  virtual std::string name() const = 0;
  // Called once per key before proving with it; a backend that builds fixed-base tables builds
  // them for `fixed_bases` (the device-memory plan's choice), others ignore them. Returns what it
  // now holds, lines for the job's log ("" where nothing).
  virtual std::string prepare(const ProvingKey&, std::span<const zkpipe::policy::FixedBaseTable> /*fixed_bases*/) {
    return {};
  }
  // What proving with `pk` holds in its device's memory, before any of it is allocated (nothing
  // where the backend computes in host memory); fixed-base tables' savings are estimated for MSMs
  // of `scalars` (a witness's, or most_msm_scalars).
  virtual zkpipe::policy::DeviceFootprint device_footprint(const ProvingKey&, const MsmScalarCounts& /*scalars*/) const {
    return {};
  }
  // Allocates, before the first proof, what stage_witness() needs for `pk`'s splits staged from
  // `from` (and the host block they are split into: page-locked where `from` is pinned); without
  // it the first stage_witness() does. Returns what it allocated, a line for the job's log (""
  // where nothing).
  virtual std::string reserve_witness_staging(const ProvingKey&, WitnessHostMemory) { return {}; }

  // Given a, b, c evaluated on the n rows, leaves in `a` the values p_i = A(g_i)B(g_i) - C(g_i)
  // on the coset g_i = omega_2n * omega_n^i (snarkjs's H input). b and c are clobbered.
  virtual void quotient_evaluations(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c,
                                    const ntt::Domain& domain) = 0;

  // sum_i scalars[i] * bases[indices[i]] (all bases in order when indices is empty).
  virtual G1 msm(std::span<const G1Affine> bases, std::span<const uint32_t> indices,
                 std::span<const Fr> scalars) = 0;
  virtual G2 msm(std::span<const G2Affine> bases, std::span<const uint32_t> indices,
                 std::span<const Fr> scalars) = 0;
  // sum_i bases[indices[i]]: the batch addition of bases whose scalar is 1.
  virtual G1 sum(std::span<const G1Affine> bases, std::span<const uint32_t> indices) = 0;
  virtual G2 sum(std::span<const G2Affine> bases, std::span<const uint32_t> indices) = 0;

  // The prover's staging seam: the quotient in three steps, so that the host buffers holding
  // a, b, c (a pinned slab or pageable memory) can be reused once they are copied, and so that
  // the quotient stays where it was computed. stage_quotient_inputs() copies a, b, c (domain.n
  // each) into the backend's own memory; staged_quotient_evaluations() computes there what
  // quotient_evaluations() leaves in a; staged_quotient_msm() is the MSM of `bases` (the key's H
  // points) with those evaluations as scalars, after which the staged inputs are spent. These
  // defaults keep the copies in host vectors, which suits backends computing on the host; a GPU
  // backend overrides them to copy host-to-device once, from the caller's (pinned) memory, and
  // to keep the quotient on the device.
  virtual void stage_quotient_inputs(std::span<const Fr> a, std::span<const Fr> b, std::span<const Fr> c) {
    staged_a_.assign(a.begin(), a.end());
    staged_b_.assign(b.begin(), b.end());
    staged_c_.assign(c.begin(), c.end());
  }
  virtual void staged_quotient_evaluations(const ntt::Domain& domain) {
    quotient_evaluations(staged_a_, staged_b_, staged_c_, domain);
  }
  virtual G1 staged_quotient_msm(std::span<const G1Affine> bases) { return msm(bases, {}, staged_a_); }

  // The witness half of the staging seam, called before the compute section: copies the scalars
  // and index lists of both splits to the backend's own memory, from `from`. Host backends keep
  // nothing (the default): their MSMs read the splits where they are.
  virtual StagedWitness stage_witness(const ProofSplits&, WitnessHostMemory /*from*/) { return {}; }
  // The host block (reserve_witness_staging(): page-locked where staging is pinned) that the next
  // proof's splits may be split into (split_for_proof's `into`), so that stage_witness() copies
  // them from there with no host copy first and no split allocates; valid until the next
  // reserve, and written over by the next split into it. Empty where the backend has none (the
  // default).
  virtual std::span<std::byte> witness_split_memory() { return {}; }

  // The copies the backend made on its own since the last call, in the order they started (none
  // where it streams nothing), so that every byte crossing the link is traced.
  virtual std::vector<BackendCopy> take_copies() { return {}; }

 protected:
  friend class StagedWitness;
  // Forgets the splits of `staging` if they are still the ones staged (called by their
  // StagedWitness's destructor).
  virtual void release_staged_witness(uint64_t /*staging*/) noexcept {}

 private:
  std::vector<Fr> staged_a_, staged_b_, staged_c_;
};

inline StagedWitness::~StagedWitness() {
  if (backend_) backend_->release_staged_witness(staging_);
}

}  // namespace zk::groth16
