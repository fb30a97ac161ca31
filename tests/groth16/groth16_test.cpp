// Groth16 end to end on the CPU backend: proofs of both built-in circuits verify; changing any
// proof element or any public input makes verification fail; keys survive a file round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "engine/groth16/cpu_backend.hpp"
#include "engine/groth16/keys.hpp"
#include "engine/groth16/prover.hpp"
#include "engine/groth16/setup.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "engine/util/error.hpp"
#include "engine/util/rng.hpp"

namespace zk::groth16 {
namespace {

struct Fixture {
  ProvingKey pk;
  Proof proof;
  std::vector<Fr> publics;
};

Fixture prove_builtin(const std::string& name, uint64_t constraints, uint64_t witness_seed) {
  auto circuit = circuits::make_circuit({name, constraints});
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, 0);
  Fixture f;
  f.pk = setup(builder.take(), ToxicWaste::from_seed(42), circuit->spec());
  std::vector<Fr> a(f.pk.domain_size()), b(a.size()), c(a.size());
  auto z = synthesize(*circuit, witness_seed, f.pk, a, b, c);
  CpuBackend backend;
  Rng rng(witness_seed);
  f.proof = prove(backend, f.pk, a, b, c, z, rng.field<Fr>(), rng.field<Fr>());
  f.publics.assign(z.begin() + 1, z.begin() + 1 + f.pk.num_public);
  return f;
}

class Groth16Circuits : public ::testing::TestWithParam<std::pair<std::string, uint64_t>> {};

TEST_P(Groth16Circuits, ProofVerifiesAndEveryTamperingIsRejected) {
  auto [name, size] = GetParam();
  Fixture f = prove_builtin(name, size, 7);
  VerifyingKey vk = f.pk.verifying_key();
  ASSERT_TRUE(verify(vk, f.proof, f.publics)) << verify(vk, f.proof, f.publics).reason;

  G1 g1 = G1::from_affine(bls12_381::g1_generator());
  G2 g2 = G2::from_affine(bls12_381::g2_generator());
  Proof bad = f.proof;
  bad.a = (G1::from_affine(bad.a) + g1).to_affine();
  EXPECT_FALSE(verify(vk, bad, f.publics));
  bad = f.proof;
  bad.b = (G2::from_affine(bad.b) + g2).to_affine();
  EXPECT_FALSE(verify(vk, bad, f.publics));
  bad = f.proof;
  bad.c = (G1::from_affine(bad.c) + g1).to_affine();
  EXPECT_FALSE(verify(vk, bad, f.publics));
  for (size_t i = 0; i < f.publics.size(); ++i) {
    auto publics = f.publics;
    publics[i] += Fr::one();
    EXPECT_FALSE(verify(vk, f.proof, publics)) << "public input " << i;
  }
  auto fewer = f.publics;
  fewer.pop_back();
  EXPECT_FALSE(verify(vk, f.proof, fewer));
}

INSTANTIATE_TEST_SUITE_P(BuiltIn, Groth16Circuits,
                         ::testing::Values(std::pair<std::string, uint64_t>{"dense", 3000},
                                           std::pair<std::string, uint64_t>{"poseidon-merkle", 6000}),
                         [](const auto& info) {
                           std::string n = info.param.first;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(Groth16, PoseidonMerkleWitnessIsMostlyBits) {
  auto circuit = circuits::make_circuit({"poseidon-merkle", 30000});
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, 3);
  auto r1cs = builder.take();
  auto split = split_witness(r1cs.assignment);
  double bits = double(split.zeros + split.ones.size()) / r1cs.assignment.size();
  EXPECT_GT(bits, 0.5) << "zero/one share " << bits;
  EXPECT_LE(r1cs.constraints.size(), 30000u);
}

TEST(Groth16, WrongWitnessIsRefusedBeforeProving) {
  // A key for one circuit cannot prove another circuit's witness.
  Fixture f = prove_builtin("dense", 500, 1);
  auto other = circuits::make_circuit({"dense", 400});
  std::vector<Fr> a(f.pk.domain_size()), b(a.size()), c(a.size());
  EXPECT_THROW(synthesize(*other, 1, f.pk, a, b, c), Error);
}

TEST(Groth16, KeysAndJsonRoundTrip) {
  Fixture f = prove_builtin("dense", 200, 5);
  auto dir = std::filesystem::temp_directory_path() / "zkpipe_groth16_test";
  std::filesystem::create_directories(dir);
  write_proving_key(f.pk, dir / "pk");
  ProvingKey back = read_proving_key(dir / "pk");
  EXPECT_EQ(back.h.size(), f.pk.h.size());
  EXPECT_EQ(back.b2.back(), f.pk.b2.back());
  EXPECT_EQ(back.circuit.name, "dense");
  write_verifying_key_json(f.pk.verifying_key(), dir / "vk.json");
  write_proof_json(f.proof, dir / "proof.json");
  write_public_json(f.publics, dir / "public.json");
  EXPECT_TRUE(verify(read_verifying_key_json(dir / "vk.json"), read_proof_json(dir / "proof.json"),
                     read_public_json(dir / "public.json")));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zk::groth16
