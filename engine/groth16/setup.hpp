// setup.hpp — Groth16 key generation in snarkjs's convention, from a seeded toxic waste.
//
// FOR TESTING AND BENCHMARKS ONLY: whoever knows the seed can forge proofs. Real deployments
// take keys from a ceremony (snarkjs .zkey). The keys follow snarkjs's zkey_new.js: domain n the
// smallest power of two above constraints + public inputs, rows m+s with A = z_s, gamma = 1,
// L_c on ffjavascript's roots, H[i] = [L^(2n)_{2i+1}(tau)/delta]_1, so proofs from these keys
// verify in snarkjs. The fixed-base products (most of the work) run on every CPU core, or on a
// GPU (make_fixed_base_multiplier("cuda"), backend_registry.hpp); both give the same key.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/groth16/keys.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "kernels/ec/fixed_base.hpp"

namespace zk::groth16 {

struct ToxicWaste {
  bls12_381::Fr tau, alpha, beta, delta;
  static ToxicWaste from_seed(uint64_t seed);
};

// Called with a step's name as setup moves through its stages (for progress output).
using SetupProgress = std::function<void(std::string_view step)>;

// Setup's fixed-base products k_i * G of the generators G of G1 and G2, in affine form.
class FixedBaseMultiplier {
 public:
  virtual ~FixedBaseMultiplier() = default;
  virtual std::string name() const = 0;
  virtual std::vector<G1Affine> g1(std::span<const bls12_381::Fr> scalars) = 0;
  virtual std::vector<G2Affine> g2(std::span<const bls12_381::Fr> scalars) = 0;
};

// The products on every CPU core (worker_threads()).
class CpuFixedBase final : public FixedBaseMultiplier {
 public:
  CpuFixedBase();
  std::string name() const override { return "cpu"; }
  std::vector<G1Affine> g1(std::span<const bls12_381::Fr> scalars) override;
  std::vector<G2Affine> g2(std::span<const bls12_381::Fr> scalars) override;

 private:
  ec::FixedBaseTable<bls12_381::G1Curve> g1_;
  ec::FixedBaseTable<bls12_381::G2Curve> g2_;
};

// `fixed_base`: where the products run (null: every CPU core).
ProvingKey setup(const r1cs::R1cs& r1cs, const ToxicWaste& waste, const circuits::CircuitSpec& spec,
                 const SetupProgress& progress = {}, FixedBaseMultiplier* fixed_base = nullptr);

}  // namespace zk::groth16
