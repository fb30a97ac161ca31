// prover.hpp — the Groth16 prover, backend-independent: synthesis into a/b/c buffers, the
// quotient on a backend, supraseal's witness split (0 skipped, 1 by batch addition, the rest by
// tail MSM), and snarkjs's assembly with blinding r, s. Proofs verify in snarkjs.
//
// Phases are timed into an optional PhaseLog under the trace schema's names: synth, ntt, msm_h,
// batch_add, msm_a, msm_b1, msm_l, msm_b2, assemble.
#pragma once
#include <span>
#include <vector>

#include "engine/circuits/circuit.hpp"
#include "engine/groth16/backend.hpp"
#include "engine/util/phase_log.hpp"

namespace zk::groth16 {

struct Proof {
  G1Affine a;
  G2Affine b;
  G1Affine c;
};

// Generates the witness of `witness_seed` for `circuit` (its independent parts in parallel),
// evaluates its rows into a, b, c (each domain_size() long) from the key's constraint matrices and
// returns the assignment z, on every core the calling thread may use (worker_threads()). Throws zk::Error if the
// circuit does not match the key or the witness does not satisfy it.
std::vector<Fr> synthesize(const circuits::Circuit& circuit, uint64_t witness_seed,
                           const ProvingKey& pk, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c,
                           PhaseLog* log = nullptr);

// a, b, c as synthesize() left them; z the assignment; r, s the blinding factors.
Proof prove(ProverBackend& backend, const ProvingKey& pk, std::span<const Fr> a, std::span<const Fr> b,
            std::span<const Fr> c, std::span<const Fr> z, const Fr& r, const Fr& s, PhaseLog* log = nullptr);

// prove() after its quotient: backend.staged_quotient_evaluations() has run on the staged a, b, c
// (see ProverBackend), and `splits` is split_for_proof(z, pk), which the engine computes before
// it takes the GPU, so that CPU work never holds the device.
Proof prove_staged(ProverBackend& backend, const ProvingKey& pk, std::span<const Fr> z, const ProofSplits& splits,
                   const Fr& r, const Fr& s, PhaseLog* log = nullptr);

}  // namespace zk::groth16
