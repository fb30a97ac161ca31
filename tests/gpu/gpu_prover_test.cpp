// gpu_prover_test.cu — whole Groth16 proofs on the CUDA backend: with the same blinding the GPU
// proof equals the CPU backend's point for point, and it verifies on the CPU verifier; both
// built-in circuits (dense: random witness; poseidon-merkle: mostly 0/1, so the split's batch
// addition carries real work). make_backend("cuda") gives this backend. Streamed bases (no
// prepare(), small chunks) give the same proof.
#include <string>
#include <vector>

#include "engine/groth16/backend_registry.hpp"
#include "engine/groth16/cpu_backend.hpp"
#include "engine/groth16/cuda_backend.hpp"
#include "engine/groth16/prover.hpp"
#include "engine/groth16/setup.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "engine/util/rng.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace zk::groth16 {
namespace {

class GpuProver : public ::testing::TestWithParam<std::pair<std::string, uint64_t>> {
 protected:
  void SetUp() override { SKIP_WITHOUT_CUDA_DEVICE(); }
};

TEST_P(GpuProver, ProofEqualsCpuProofAndVerifies) {
  auto [name, size] = GetParam();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(name + " seed " + std::to_string(seed));
  auto circuit = circuits::make_circuit({name, size});
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, 0);
  ProvingKey pk = setup(builder.take(), ToxicWaste::from_seed(seed), circuit->spec());
  Rng rng(seed);
  const Fr r = rng.field<Fr>(), s = rng.field<Fr>();
  const uint64_t witness_seed = rng.next_u64();

  auto prove_with = [&](ProverBackend& backend) {
    std::vector<Fr> a(pk.domain_size()), b(a.size()), c(a.size());
    auto z = synthesize(*circuit, witness_seed, pk, a, b, c);
    backend.prepare(pk);
    return std::make_pair(prove(backend, pk, a, b, c, z, r, s), z);
  };
  CpuBackend cpu;
  auto gpu = make_backend("cuda");
  ASSERT_EQ(gpu->name(), "cuda");
  auto [cpu_proof, z] = prove_with(cpu);
  auto [gpu_proof, z_again] = prove_with(*gpu);
  EXPECT_TRUE(gpu_proof.a == cpu_proof.a);
  EXPECT_TRUE(gpu_proof.b == cpu_proof.b);
  EXPECT_TRUE(gpu_proof.c == cpu_proof.c);
  std::vector<Fr> publics(z.begin() + 1, z.begin() + 1 + pk.num_public);
  Verdict verdict = verify(pk.verifying_key(), gpu_proof, publics);
  EXPECT_TRUE(verdict) << verdict.reason;
}

// Without prepare() the key's bases stream from the host: chunks of 1000 points cut every MSM and
// batch addition (and their index lists) into several, and the proof is still the CPU's.
TEST_P(GpuProver, StreamedBasesGiveTheCpuProof) {
  auto [name, size] = GetParam();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(name + " seed " + std::to_string(seed));
  auto circuit = circuits::make_circuit({name, size});
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, 0);
  ProvingKey pk = setup(builder.take(), ToxicWaste::from_seed(seed), circuit->spec());
  Rng rng(seed);
  const Fr r = rng.field<Fr>(), s = rng.field<Fr>();
  std::vector<Fr> a(pk.domain_size()), b(a.size()), c(a.size());
  const auto z = synthesize(*circuit, rng.next_u64(), pk, a, b, c);
  CpuBackend cpu;
  cpu.prepare(pk);
  CudaBackend streamed(/*stream_chunk_points=*/1000);
  const Proof expected = prove(cpu, pk, a, b, c, z, r, s);
  const Proof proof = prove(streamed, pk, a, b, c, z, r, s);
  EXPECT_TRUE(proof.a == expected.a);
  EXPECT_TRUE(proof.b == expected.b);
  EXPECT_TRUE(proof.c == expected.c);
}

INSTANTIATE_TEST_SUITE_P(BuiltinCircuits, GpuProver,
                         ::testing::Values(std::make_pair(std::string("dense"), uint64_t{3000}),
                                           std::make_pair(std::string("poseidon-merkle"), uint64_t{6000})));

}  // namespace
}  // namespace zk::groth16
