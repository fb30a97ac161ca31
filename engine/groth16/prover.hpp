// prover.hpp — the Groth16 prover, backend-independent: synthesis into a/b/c buffers, the
// quotient on a backend, supraseal's witness split (0 skipped, 1 by batch addition, the rest by
// tail MSM), and snarkjs's assembly with blinding r, s. Proofs verify in snarkjs.
//
// A proof hides its witness only if its blinding r, s is fresh, uniform and secret, so the prover
// takes a Blinding, which only two factories make: Blinding::fresh(SecureRandom&), from the
// operating system's CSPRNG, for every proof anyone relies on; Blinding::seeded_for_tests(Rng&),
// from the reproducible SplitMix64, for tests and benchmarks only. The types keep the two apart.
//
// Phases are timed into an optional PhaseLog under the trace schema's names: synth, ntt, msm_h,
// batch_add, msm_a, msm_b1, msm_l, msm_b2, assemble.
#pragma once
#include <span>
#include <vector>

#include "engine/circuits/circuit.hpp"
#include "engine/groth16/backend.hpp"
#include "engine/util/phase_log.hpp"
#include "engine/util/rng.hpp"
#include "engine/util/secure_random.hpp"

namespace zk::groth16 {

struct Proof {
  G1Affine a;
  G2Affine b;
  G1Affine c;
};

// One proof's blinding factors: draw a new one for every proof.
class Blinding {
 public:
  static Blinding fresh(SecureRandom& random) { return {random.field<Fr>(), random.field<Fr>()}; }
  // Reproducible and predictable: tests and benchmarks only, never a proof that hides a witness.
  static Blinding seeded_for_tests(Rng& rng) { return {rng.field<Fr>(), rng.field<Fr>()}; }
  const Fr& r() const { return r_; }
  const Fr& s() const { return s_; }

 private:
  Blinding(const Fr& r, const Fr& s) : r_(r), s_(s) {}
  Fr r_, s_;
};

// Generates the witness of `witness_seed` for `circuit` (its independent parts in parallel),
// evaluates its rows into a, b, c (each domain_size() long) from the key's constraint matrices and
// returns the assignment z, on every core the calling thread may use (worker_threads()). Throws zk::Error if the
// circuit does not match the key or the witness does not satisfy it.
std::vector<Fr> synthesize(const circuits::Circuit& circuit, uint64_t witness_seed,
                           const ProvingKey& pk, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c,
                           PhaseLog* log = nullptr);
// The assignment z alone (synthesize() without the rows).
std::vector<Fr> witness_of(const circuits::Circuit& circuit, uint64_t witness_seed, const ProvingKey& pk);

// a, b, c as synthesize() left them; z the assignment.
Proof prove(ProverBackend& backend, const ProvingKey& pk, std::span<const Fr> a, std::span<const Fr> b,
            std::span<const Fr> c, std::span<const Fr> z, const Blinding& blinding, PhaseLog* log = nullptr);

// prove() after its quotient: backend.staged_quotient_evaluations() has run on the staged a, b, c
// (see ProverBackend), and `splits` is split_for_proof(z, pk), which the engine computes before
// it takes the GPU, so that CPU work never holds the device.
Proof prove_staged(ProverBackend& backend, const ProvingKey& pk, std::span<const Fr> z, const ProofSplits& splits,
                   const Blinding& blinding, PhaseLog* log = nullptr);

}  // namespace zk::groth16
