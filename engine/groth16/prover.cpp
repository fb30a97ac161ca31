#include "engine/groth16/prover.hpp"

#include "engine/r1cs/r1cs.hpp"
#include "engine/util/error.hpp"

namespace zk::groth16 {

std::vector<Fr> synthesize(const circuits::Circuit& circuit, uint64_t witness_seed,
                           const ProvingKey& pk, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c,
                           PhaseLog* log) {
  auto scope = timed(log, "synth", pk.num_constraints);
  if (pk.constraints.rows() != pk.num_constraints)
    fail("the proving key carries no constraint matrices (a key from a circom .zkey?); a built-in circuit "
         "needs a key from `zkpipe setup`");
  auto z = witness_of(circuit, witness_seed, pk);
  r1cs::evaluate_rows(pk.constraints, z, pk.num_public, a, b, c);
  return z;
}

std::vector<Fr> witness_of(const circuits::Circuit& circuit, uint64_t witness_seed, const ProvingKey& pk) {
  r1cs::WitnessGenerator witness(pk.num_vars);
  circuit.synthesize(witness, witness_seed);
  const uint32_t num_public = witness.num_public();
  auto z = witness.take();
  if (num_public != pk.num_public || z.size() != pk.num_vars)
    fail("the proving key was made for another circuit ({} public inputs, {} variables); '{}' at size {} has {} "
         "public inputs and {} variables: run `zkpipe setup` for it",
         pk.num_public, pk.num_vars, circuit.spec().name, circuit.spec().target_constraints, num_public, z.size());
  return z;
}

namespace {

// sum_i z_i P_i by the split: batch addition of the ones plus the tail MSM of the rest.
template <class Affine>
auto split_msm(ProverBackend& backend, std::span<const Affine> bases, const WitnessSplit& split,
               const char* phase, PhaseLog* log) {
  auto ones = [&] {
    auto scope = timed(log, "batch_add", split.ones.size());
    return backend.sum(bases, split.ones);
  }();
  auto scope = timed(log, phase, split.significant.size());
  return ones + backend.msm(bases, split.significant, split.significant_scalars);
}

}  // namespace

Proof prove(ProverBackend& backend, const ProvingKey& pk, std::span<const Fr> a, std::span<const Fr> b,
            std::span<const Fr> c, std::span<const Fr> z, const Blinding& blinding, PhaseLog* log) {
  const ntt::Domain domain(static_cast<int>(pk.lg_domain));
  if (a.size() != domain.n || b.size() != domain.n || c.size() != domain.n || z.size() != pk.num_vars)
    fail("prove: inputs do not match the proving key (domain {}, {} variables)", domain.n, pk.num_vars);
  backend.stage_quotient_inputs(a, b, c);
  {
    auto scope = timed(log, "ntt", domain.n);  // items: the domain, as every ntt span counts
    backend.staged_quotient_evaluations(domain);
  }
  return prove_staged(backend, pk, z, split_for_proof(z, pk), blinding, log);
}

// The MSMs, then snarkjs's assembly with the blinding's r and s.
Proof prove_staged(ProverBackend& backend, const ProvingKey& pk, std::span<const Fr> z, const ProofSplits& splits,
                   const Blinding& blinding, PhaseLog* log) {
  if (z.size() != pk.num_vars) fail("prove: an assignment of {} values for a key of {} variables", z.size(), pk.num_vars);
  G1 h = [&] {
    auto scope = timed(log, "msm_h", pk.domain_size());
    return backend.staged_quotient_msm(std::span<const G1Affine>(pk.h));
  }();
  G1 a_sum = split_msm(backend, std::span<const G1Affine>(pk.a), splits.all, "msm_a", log);
  G1 b1_sum = split_msm(backend, std::span<const G1Affine>(pk.b1), splits.b, "msm_b1", log);
  G1 l_sum = split_msm(backend, std::span<const G1Affine>(pk.l), splits.priv, "msm_l", log);
  G2 b2_sum = split_msm(backend, std::span<const G2Affine>(pk.b2), splits.b, "msm_b2", log);

  auto scope = timed(log, "assemble", 1);
  using bls12_381::mul;
  const Fr &r = blinding.r(), &s = blinding.s();
  G1 delta1 = G1::from_affine(pk.delta1);
  G1 pi_a = a_sum + pk.alpha1 + mul(delta1, r);
  G2 pi_b = b2_sum + pk.beta2 + mul(G2::from_affine(pk.delta2), s);
  G1 b1 = b1_sum + pk.beta1 + mul(delta1, s);
  G1 pi_c = l_sum + h + mul(pi_a, s) + mul(b1, r) - mul(delta1, r * s);
  return {pi_a.to_affine(), pi_b.to_affine(), pi_c.to_affine()};
}

}  // namespace zk::groth16
