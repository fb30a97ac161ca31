// Groth16 end to end on the CPU backend: proofs of both built-in circuits verify; changing any
// proof element or any public input makes verification fail; proofs blinded from the OS CSPRNG
// differ; keys survive a file round trip.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "engine/groth16/cpu_backend.hpp"
#include "engine/groth16/keys.hpp"
#include "engine/groth16/prover.hpp"
#include "engine/groth16/setup.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "engine/util/error.hpp"
#include "engine/util/rng.hpp"
#include "kernels/util/parallel.hpp"

namespace zk::groth16 {
namespace {

// A built-in circuit's key (setup from seed 42) and one witness with its a, b, c.
struct Synthesized {
  ProvingKey pk;
  std::vector<Fr> a, b, c, z;
  std::vector<Fr> publics() const { return {z.begin() + 1, z.begin() + 1 + pk.num_public}; }
};

Synthesized synthesized(const std::string& name, uint64_t constraints, uint64_t witness_seed) {
  auto circuit = circuits::make_circuit({name, constraints});
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, 0);
  Synthesized s;
  s.pk = setup(builder.take(), ToxicWaste::from_seed(42), circuit->spec());
  s.a.resize(s.pk.domain_size()), s.b.resize(s.a.size()), s.c.resize(s.a.size());
  s.z = synthesize(*circuit, witness_seed, s.pk, s.a, s.b, s.c);
  return s;
}

struct Fixture {
  ProvingKey pk;
  Proof proof;
  std::vector<Fr> publics;
};

Fixture prove_builtin(const std::string& name, uint64_t constraints, uint64_t witness_seed) {
  Synthesized s = synthesized(name, constraints, witness_seed);
  CpuBackend backend;
  Rng rng(witness_seed);
  Fixture f;
  f.proof = prove(backend, s.pk, s.a, s.b, s.c, s.z, Blinding::seeded_for_tests(rng));
  f.publics = s.publics();
  f.pk = std::move(s.pk);
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

// Blinding from the OS CSPRNG: two proofs of one witness share no element, and both verify.
TEST(Groth16, TwoProofsOfOneWitnessDifferAndBothVerify) {
  Synthesized s = synthesized("poseidon-merkle", 2000, 7);
  const ProvingKey& pk = s.pk;
  const std::vector<Fr> publics = s.publics();
  CpuBackend backend;
  SecureRandom random;
  const Proof first = prove(backend, pk, s.a, s.b, s.c, s.z, Blinding::fresh(random));
  const Proof second = prove(backend, pk, s.a, s.b, s.c, s.z, Blinding::fresh(random));
  EXPECT_FALSE(first.a == second.a);
  EXPECT_FALSE(first.b == second.b);
  EXPECT_FALSE(first.c == second.c);
  for (const Proof& proof : {first, second}) {
    const Verdict verdict = verify(pk.verifying_key(), proof, publics);
    EXPECT_TRUE(verdict) << verdict.reason;
  }
}

TEST(Groth16, PoseidonMerkleWitnessIsMostlyBits) {
  auto circuit = circuits::make_circuit({"poseidon-merkle", 30000});
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, 3);
  auto r1cs = builder.take();
  const WitnessCounts counts = count_witness(r1cs.assignment);
  EXPECT_EQ(counts.zeros + counts.ones + counts.significant, r1cs.assignment.size());
  double bits = double(counts.zeros + counts.ones) / r1cs.assignment.size();
  EXPECT_GT(bits, 0.5) << "zero/one share " << bits;
  EXPECT_LE(r1cs.num_constraints(), 30000u);
}

// The witness generator skips building constraints; it must still allocate exactly the variables,
// with the values, that the R1CS builder records, or the key's matrices would read the wrong z.
TEST(Synthesis, WitnessGeneratorAssignsWhatTheBuilderRecords) {
  for (const auto& [name, size] : {std::pair<std::string, uint64_t>{"dense", 2000}, {"poseidon-merkle", 20000},
                                   {"poseidon-merkle", 90000}}) {  // 90000: three paths, three parts
    auto circuit = circuits::make_circuit({name, size});
    for (uint64_t seed : {1, 2, 99}) {
      r1cs::R1csBuilder builder;
      circuit->synthesize(builder, seed);
      auto r1cs = builder.take();
      r1cs::WitnessGenerator generator;
      circuit->synthesize(generator, seed);
      EXPECT_EQ(generator.num_public(), r1cs.num_public) << name;
      EXPECT_EQ(generator.take(), r1cs.assignment) << name << " seed " << seed;
    }
  }
}

// A part that allocates other than it declared is refused, in order and on every core alike.
TEST(Synthesis, APartOfTheWrongSizeIsACircuitBug) {
  auto part_of_three = [](r1cs::ConstraintSystem& cs, uint64_t k) {
    for (uint64_t i = 0; i < 3; ++i) cs.alloc_private(Fr::from_u64(k));
  };
  for (uint64_t declared : {2, 4}) {
    r1cs::R1csBuilder builder;
    EXPECT_THROW(builder.parts(5, declared, part_of_three), std::logic_error) << declared;
    r1cs::WitnessGenerator generator;
    EXPECT_THROW(generator.parts(5, declared, part_of_three), std::logic_error) << declared;
  }
  r1cs::WitnessGenerator generator;
  generator.alloc_public(Fr::from_u64(7));
  generator.parts(5, 3, part_of_three);
  const auto z = generator.take();
  ASSERT_EQ(z.size(), 2 + 5 * 3);
  for (uint64_t k = 0; k < 5; ++k) EXPECT_EQ(z[2 + 3 * k + 2], Fr::from_u64(k));
}

// Rows from the matrices: a*b = c on every constraint row, the public-input rows carry z_s in a,
// the rest of the domain is zero; the same on one core and on four.
TEST(Synthesis, RowsFromTheMatricesFollowSnarkjsOnAnyCoreCount) {
  auto circuit = circuits::make_circuit({"poseidon-merkle", 9000});
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, 5);
  auto r1cs = builder.take();
  const size_t m = r1cs.num_constraints(), n = size_t{1} << r1cs::domain_lg_size(m, r1cs.num_public);
  std::vector<std::vector<Fr>> rows_by_threads;
  for (size_t threads : {1, 4}) {
    set_worker_threads(threads);
    std::vector<Fr> a(n, Fr::one()), b(n, Fr::one()), c(n, Fr::one());
    r1cs::evaluate_rows(r1cs.matrices, r1cs.assignment, r1cs.num_public, a, b, c);
    for (size_t i = 0; i < m; ++i) ASSERT_EQ(a[i] * b[i], c[i]) << "row " << i;
    for (size_t s = 0; s <= r1cs.num_public; ++s) EXPECT_EQ(a[m + s], r1cs.assignment[s]);
    for (size_t i = m; i < n; ++i) EXPECT_TRUE(b[i].is_zero() && c[i].is_zero()) << "row " << i;
    for (size_t i = m + r1cs.num_public + 1; i < n; ++i) EXPECT_TRUE(a[i].is_zero()) << "row " << i;
    a.insert(a.end(), b.begin(), b.end());
    a.insert(a.end(), c.begin(), c.end());
    rows_by_threads.push_back(std::move(a));
  }
  set_worker_threads(std::thread::hardware_concurrency());
  EXPECT_EQ(rows_by_threads[0], rows_by_threads[1]);
}

// A wrong witness value is caught at the first constraint it breaks, whatever the core count.
TEST(Synthesis, AnUnsatisfiedConstraintIsNamedTheSameOnAnyCoreCount) {
  auto circuit = circuits::make_circuit({"dense", 20000});
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, 5);
  auto r1cs = builder.take();
  const size_t n = size_t{1} << r1cs::domain_lg_size(r1cs.num_constraints(), r1cs.num_public);
  // Variable 3 + num_public + i is v_i, the output of constraint i; the constraints reading it
  // later break too, so the first broken is 15000.
  auto z = r1cs.assignment;
  z[3 + r1cs.num_public + 15000] += Fr::one();
  for (size_t threads : {1, 3, 8}) {
    set_worker_threads(threads);
    std::vector<Fr> a(n), b(n), c(n);
    try {
      r1cs::evaluate_rows(r1cs.matrices, z, r1cs.num_public, a, b, c);
      ADD_FAILURE() << "a wrong witness was accepted on " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("does not satisfy constraint 15000 "), std::string::npos) << e.what();
    }
  }
  set_worker_threads(std::thread::hardware_concurrency());
}

// The split made on several cores lists the same entries, in index order, as one pass would, and
// counts what count_witness() counts; a split less some entries (split_without) lists the others.
TEST(Groth16, WitnessSplitOnAnyCoreCountMatchesOnePass) {
  Rng rng(17);
  for (size_t size : {1, 4095, 70001}) {
    std::vector<Fr> z(size);
    std::vector<uint32_t> skip;  // about one entry in 8
    for (size_t i = 0; i < size; ++i) {
      uint64_t kind = rng.below(3);
      z[i] = kind == 0 ? Fr::zero() : kind == 1 ? Fr::one() : rng.field<Fr>();
      if (rng.below(8) == 0) skip.push_back(static_cast<uint32_t>(i));
    }
    for (size_t first : {size_t{0}, size_t{1}, size / 2}) {
      size_t zeros = 0;
      std::vector<uint32_t> ones, significant, kept_ones, kept_significant;
      std::vector<Fr> scalars, kept_scalars;
      for (size_t i = first; i < size; ++i) {
        auto index = static_cast<uint32_t>(i - first);
        const bool kept = !std::ranges::binary_search(skip, index);
        if (z[i].is_zero()) {
          zeros++;
        } else if (z[i] == Fr::one()) {
          ones.push_back(index);
          if (kept) kept_ones.push_back(index);
        } else {
          significant.push_back(index);
          scalars.push_back(z[i]);
          if (kept) kept_significant.push_back(index), kept_scalars.push_back(z[i]);
        }
      }
      for (size_t threads : {1, 3, 16}) {
        set_worker_threads(threads);
        SplitMemory memory(SplitMemory::capacity(2 * size, 2));
        const WitnessSplit split = split_witness(z, first, memory);
        const std::string where = fmt::format("{} {} {}", size, first, threads);
        EXPECT_TRUE(std::ranges::equal(split.ones, ones)) << where;
        EXPECT_TRUE(std::ranges::equal(split.significant, significant)) << where;
        EXPECT_TRUE(std::ranges::equal(split.significant_scalars, scalars)) << where;
        const WitnessSplit kept = split_without(split, skip, memory);
        EXPECT_TRUE(std::ranges::equal(kept.ones, kept_ones)) << where;
        EXPECT_TRUE(std::ranges::equal(kept.significant, kept_significant)) << where;
        EXPECT_TRUE(std::ranges::equal(kept.significant_scalars, kept_scalars)) << where;
      }
      if (first == 0) {
        const WitnessCounts counts = count_witness(z);
        EXPECT_EQ(counts.zeros, zeros);
        EXPECT_EQ(counts.ones, ones.size());
        EXPECT_EQ(counts.significant, significant.size());
      }
    }
  }
  set_worker_threads(std::thread::hardware_concurrency());
}

// A proof's splits laid out in a caller's block: every array inside it, aligned from its start,
// in order, the block's used bytes within its capacity; a block too small is refused by name.
TEST(Groth16, ProofSplitsAreLaidOutInTheCallersBlock) {
  const Synthesized s = synthesized("poseidon-merkle", 3000, 9);
  const ProvingKey& pk = s.pk;
  const std::vector<Fr>& z = s.z;
  std::vector<std::byte> block(split_capacity(pk));
  const ProofSplits splits = split_for_proof(z, pk, block);
  const auto offset = [&](const void* array) { return static_cast<const std::byte*>(array) - block.data(); };
  std::ptrdiff_t previous = -1;
  ASSERT_TRUE(pk.splits_b_query());
  for (const WitnessSplit* split : {&splits.all, &splits.b, &splits.priv})
    for (const void* array : {static_cast<const void*>(split->significant_scalars.data()),
                              static_cast<const void*>(split->significant.data()),
                              static_cast<const void*>(split->ones.data())}) {
      EXPECT_EQ(offset(array) % std::ptrdiff_t{SplitMemory::alignment}, 0);
      EXPECT_GE(offset(array), previous);
      previous = offset(array);
    }
  EXPECT_EQ(splits.memory.used().data(), block.data());
  EXPECT_LE(splits.memory.used().size(), block.size());
  const ProofSplits own = split_for_proof(z, pk);
  EXPECT_TRUE(std::ranges::equal(own.all.significant_scalars, splits.all.significant_scalars));
  EXPECT_TRUE(std::ranges::equal(own.priv.ones, splits.priv.ones));
  std::vector<std::byte> small(SplitMemory::alignment);
  EXPECT_THROW(split_for_proof(z, pk, small), Error);
}

// The B query's index lists exactly the variables whose b1 and b2 points are both at infinity.
// Where they are many (poseidon-merkle's x^4 terms) B1 and B2 take a split without them, whose
// MSMs equal those of the whole split; where few (dense) the B split is the whole one.
TEST(Groth16, TheBSplitLeavesOutTheVariablesAbsentFromB) {
  for (auto [circuit, constraints] : {std::pair{"poseidon-merkle", 3000}, {"dense", 8000}}) {
    const Synthesized s = synthesized(circuit, constraints, 5);
    const ProvingKey& pk = s.pk;
    std::vector<uint32_t> absent;
    for (uint32_t i = 0; i < pk.num_vars; ++i)
      if (pk.b1[i].is_infinity() && pk.b2[i].is_infinity()) absent.push_back(i);
    EXPECT_EQ(pk.b_absent, absent) << circuit;
    const ProofSplits splits = split_for_proof(s.z, pk);
    EXPECT_EQ(pk.splits_b_query(), circuit == std::string("poseidon-merkle")) << absent.size() << " of " << pk.num_vars;
    if (!pk.splits_b_query()) {
      EXPECT_EQ(splits.b.significant.data(), splits.all.significant.data()) << circuit;
      continue;
    }
    std::vector<uint32_t> significant;
    std::ranges::set_difference(splits.all.significant, absent, std::back_inserter(significant));
    EXPECT_TRUE(std::ranges::equal(splits.b.significant, significant)) << circuit;
    EXPECT_LT(splits.b.significant.size(), splits.all.significant.size() * 9 / 10) << circuit;
    CpuBackend backend;
    const auto b_sum = [&](const auto& bases, const WitnessSplit& split) {
      return backend.sum(bases, split.ones) + backend.msm(bases, split.significant, split.significant_scalars);
    };
    EXPECT_EQ(b_sum(std::span<const G1Affine>(pk.b1), splits.b).to_affine(),
              b_sum(std::span<const G1Affine>(pk.b1), splits.all).to_affine()) << circuit;
    EXPECT_EQ(b_sum(std::span<const G2Affine>(pk.b2), splits.b).to_affine(),
              b_sum(std::span<const G2Affine>(pk.b2), splits.all).to_affine()) << circuit;
  }
}

// The scalars the plan's estimates take for each MSM are the significant entries of the proof's
// splits, and no more than most_msm_scalars; the witness alone equals the synthesized one.
TEST(Groth16, MsmScalarCountsAreTheSplitsSignificantEntries) {
  for (auto [circuit, constraints] : {std::pair{"poseidon-merkle", 3000}, {"dense", 8000}}) {
    const Synthesized s = synthesized(circuit, constraints, 5);
    const ProofSplits splits = split_for_proof(s.z, s.pk);
    const MsmScalarCounts counts = msm_scalar_counts(s.z, s.pk), most = most_msm_scalars(s.pk);
    EXPECT_EQ(counts, (MsmScalarCounts{splits.all.significant.size(), splits.b.significant.size(),
                                       splits.priv.significant.size(), s.pk.domain_size()}))
        << circuit;
    EXPECT_TRUE(counts.a <= most.a && counts.b <= most.b && counts.l <= most.l && counts.h == most.h) << circuit;
    const auto c = circuits::make_circuit({circuit, uint64_t(constraints)});
    EXPECT_EQ(witness_of(*c, 5, s.pk), s.z) << circuit;
  }
  const Synthesized s = synthesized("dense", 8000, 5);
  EXPECT_THROW(msm_scalar_counts(std::span(s.z).first(3), s.pk), Error);
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
  EXPECT_EQ(back.constraints, f.pk.constraints);
  write_verifying_key_json(f.pk.verifying_key(), dir / "vk.json");
  write_proof_json(f.proof, dir / "proof.json");
  write_public_json(f.publics, dir / "public.json");
  EXPECT_TRUE(verify(read_verifying_key_json(dir / "vk.json"), read_proof_json(dir / "proof.json"),
                     read_public_json(dir / "public.json")));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zk::groth16
