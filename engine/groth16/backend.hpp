// backend.hpp — the device seam of the Groth16 prover: the heavy operations (the quotient's
// transforms and the MSMs) behind one interface, implemented on the CPU (cpu_backend) and on
// CUDA GPUs. The prover's orchestration, scalar split and assembly are shared by all backends.
//
// Contract: bases are affine points owned by the caller (the proving key) and outlive the call;
// `indices`, when not empty, selects which bases take part (in order), so the witness split into
// zero / one / significant scalars needs no copies of the bases. Implementations may keep device
// copies of a key's bases between calls (prepare()).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/groth16/keys.hpp"
#include "kernels/ntt/domain.hpp"

namespace zk::groth16 {

using bls12_381::Fr;
using bls12_381::G1;
using bls12_381::G2;

class ProverBackend {
 public:
  virtual ~ProverBackend() = default;
  virtual std::string name() const = 0;
  // Called once per key before proving with it.
  virtual void prepare(const ProvingKey&) {}

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

 private:
  std::vector<Fr> staged_a_, staged_b_, staged_c_;
};

}  // namespace zk::groth16
