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

// Runs `circuit` with the witness of `witness_seed` into a, b, c (each domain_size() long) and
// returns the assignment z. Throws zk::Error if the circuit does not match the key or the
// witness does not satisfy it.
std::vector<Fr> synthesize(const circuits::Circuit& circuit, uint64_t witness_seed,
                           const ProvingKey& pk, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c,
                           PhaseLog* log = nullptr);

// Which witness entries are 0, 1 or anything else ("significant"), by index.
struct WitnessSplit {
  std::vector<uint32_t> ones, significant;
  std::vector<Fr> significant_scalars;
  size_t zeros = 0;
};
// Splits z[first, z.size()) with indices relative to `first`.
WitnessSplit split_witness(std::span<const Fr> z, size_t first = 0);

// a, b, c as synthesize() left them (clobbered); z the assignment; r, s the blinding factors.
Proof prove(ProverBackend& backend, const ProvingKey& pk, std::span<Fr> a, std::span<Fr> b,
            std::span<Fr> c, std::span<const Fr> z, const Fr& r, const Fr& s, PhaseLog* log = nullptr);

// prove() after its first step: `quotient` holds what backend.quotient_evaluations() left in a
// (the engine computes it from staged inputs, see ProverBackend::stage_quotient_inputs).
Proof prove_from_quotient(ProverBackend& backend, const ProvingKey& pk, std::span<const Fr> quotient,
                          std::span<const Fr> z, const Fr& r, const Fr& s, PhaseLog* log = nullptr);

}  // namespace zk::groth16
