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
};

}  // namespace zk::groth16
