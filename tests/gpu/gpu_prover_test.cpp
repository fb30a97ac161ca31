// gpu_prover_test.cu — whole Groth16 proofs on the CUDA backend: with the same blinding the GPU
// proof equals the CPU backend's point for point, and it verifies on the CPU verifier; both
// built-in circuits (dense: random witness; poseidon-merkle: mostly 0/1, so the split's batch
// addition carries real work). make_backend("cuda") gives this backend. Streamed bases (no
// prepare(), small chunks) give the same proof, and so does the engine's order (the witness
// staged from pinned or pageable memory before the quotient and the MSMs), and so do fixed-base
// tables of the key's arrays; a prepared backend allocates nothing while it proves. A thread
// waiting for the device sleeps.
#include <chrono>
#include <ctime>
#include <memory>
#include <optional>
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
#include "kernels/ntt/ntt_cuda.cuh"
#include "tests/gpu/gpu_test_support.hpp"

namespace zk::groth16 {
namespace {

// One circuit of the parameter's name and size, its key and a synthesized witness, fresh per test.
class GpuProver : public ::testing::TestWithParam<std::pair<std::string, uint64_t>> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_CUDA_DEVICE();
    const auto& [name, size] = GetParam();
    const uint64_t seed = test::fresh_seed();
    trace_ = name + " seed " + std::to_string(seed);
    circuit_ = circuits::make_circuit({name, size});
    r1cs::R1csBuilder builder;
    circuit_->synthesize(builder, 0);
    pk_ = setup(builder.take(), ToxicWaste::from_seed(seed), circuit_->spec());
    Rng rng(seed);
    blinding_ = Blinding::seeded_for_tests(rng);
    a_.resize(pk_.domain_size()), b_.resize(a_.size()), c_.resize(a_.size());
    z_ = synthesize(*circuit_, rng.next_u64(), pk_, a_, b_, c_);
    other_witness_seed_ = rng.next_u64();
  }
  Proof prove_on(ProverBackend& backend) const { return prove(backend, pk_, a_, b_, c_, z_, *blinding_); }
  static void expect_same_proof(const Proof& proof, const Proof& expected) {
    EXPECT_TRUE(proof.a == expected.a);
    EXPECT_TRUE(proof.b == expected.b);
    EXPECT_TRUE(proof.c == expected.c);
  }
  // The proof equals the CPU backend's with the same blinding, point for point.
  void expect_cpu_proof(const Proof& proof) const {
    CpuBackend cpu;
    cpu.prepare(pk_, {});
    expect_same_proof(proof, prove_on(cpu));
  }
  // The engine's order: the witness staged before the quotient and the MSMs, its splits made in
  // their own memory or (`into` given) in the backend's page-locked block. The proof equals the
  // CPU's and verifies; the bytes moved are the splits' block: their scalars and indices (the B
  // split's where it has arrays of its own), and the arrays' alignment.
  void expect_staged_proof(CudaBackend& gpu, WitnessHostMemory from, std::span<std::byte> into = {}) const {
    const ProofSplits splits = split_for_proof(z_, pk_, into);
    const StagedWitness staged = gpu.stage_witness(splits, from);
    std::vector<const WitnessSplit*> own{&splits.all, &splits.priv};
    if (pk_.splits_b_query()) own.push_back(&splits.b);
    uint64_t split_bytes = 0;
    for (const WitnessSplit* split : own)
      split_bytes += split->significant_scalars.size() * sizeof(Fr) +
                     (split->significant.size() + split->ones.size()) * sizeof(uint32_t);
    EXPECT_EQ(staged.h2d_bytes(), splits.memory.used().size());
    EXPECT_GE(staged.h2d_bytes(), split_bytes);
    EXPECT_LE(staged.h2d_bytes(), split_bytes + 3 * own.size() * SplitMemory::alignment);
    gpu.stage_quotient_inputs(a_, b_, c_);
    gpu.staged_quotient_evaluations(ntt::Domain(int(pk_.lg_domain)));
    const Proof proof = prove_staged(gpu, pk_, z_, splits, *blinding_);
    expect_cpu_proof(proof);
    const std::vector<Fr> publics(z_.begin() + 1, z_.begin() + 1 + pk_.num_public);
    const Verdict verdict = verify(pk_.verifying_key(), proof, publics);
    EXPECT_TRUE(verdict) << verdict.reason;
  }

  std::string trace_;
  std::unique_ptr<circuits::Circuit> circuit_;
  ProvingKey pk_;
  std::optional<Blinding> blinding_;
  std::vector<Fr> a_, b_, c_, z_;
  uint64_t other_witness_seed_ = 0;
};

TEST_P(GpuProver, ProofEqualsCpuProofAndVerifies) {
  SCOPED_TRACE(trace_);
  auto gpu = make_backend("cuda");
  ASSERT_EQ(gpu->name(), "cuda");
  gpu->prepare(pk_, {});
  const Proof proof = prove_on(*gpu);
  expect_cpu_proof(proof);
  const std::vector<Fr> publics(z_.begin() + 1, z_.begin() + 1 + pk_.num_public);
  const Verdict verdict = verify(pk_.verifying_key(), proof, publics);
  EXPECT_TRUE(verdict) << verdict.reason;
}

// Without prepare() the key's bases stream from the host: chunks of 1000 points cut every MSM and
// batch addition (and their index lists) into several, and the proof is still the CPU's.
TEST_P(GpuProver, StreamedBasesGiveTheCpuProof) {
  SCOPED_TRACE(trace_);
  CudaBackend streamed(/*stream_chunk_points=*/1000);
  expect_cpu_proof(prove_on(streamed));
}

// Every chunk of the key's points streamed into an MSM is a copy the backend reports, timed and
// in order: the H points alone are the whole domain's; a prepared key streams nothing.
TEST_P(GpuProver, StreamedChunksAreReportedAsCopies) {
  SCOPED_TRACE(trace_);
  constexpr size_t chunk_points = 1000;
  CudaBackend streamed(chunk_points);
  expect_cpu_proof(prove_on(streamed));
  const std::vector<BackendCopy> copies = streamed.take_copies();
  ASSERT_FALSE(copies.empty());
  uint64_t bytes = 0;
  for (size_t i = 0; i < copies.size(); ++i) {
    EXPECT_LE(copies[i].start, copies[i].end);
    if (i > 0) {
      EXPECT_LE(copies[i - 1].start, copies[i].start);
    }
    EXPECT_GT(copies[i].bytes, 0u);
    EXPECT_LE(copies[i].bytes, chunk_points * sizeof(G2Affine));
    bytes += copies[i].bytes;
  }
  EXPECT_GE(bytes, pk_.h.size() * sizeof(G1Affine) + pk_.b2.size() / 2 * sizeof(G2Affine));
  EXPECT_TRUE(streamed.take_copies().empty()) << "taken once";
  CudaBackend prepared;
  prepared.prepare(pk_, {});
  expect_cpu_proof(prove_on(prepared));
  EXPECT_TRUE(prepared.take_copies().empty());
}

// The witness staged from pinned and from pageable memory, split into its own memory or into the
// backend's block, on prepared and on streamed bases, gives the CPU's proof. Once its
// StagedWitness is gone, a proof of another witness (whose splits may take the freed splits'
// addresses) is the CPU's too: the backend no longer reads the copy.
TEST_P(GpuProver, StagedWitnessGivesTheCpuProof) {
  SCOPED_TRACE(trace_);
  CudaBackend prepared;
  prepared.prepare(pk_, {});
  CudaBackend streamed(/*stream_chunk_points=*/1000);
  for (CudaBackend* gpu : {&prepared, &streamed})
    for (const WitnessHostMemory from : {WitnessHostMemory::pinned, WitnessHostMemory::pageable}) {
      SCOPED_TRACE(std::string(gpu == &prepared ? "prepared" : "streamed") + " bases, staged from " +
                   (from == WitnessHostMemory::pinned ? "pinned" : "pageable") + " memory");
      expect_staged_proof(*gpu, from);
      gpu->reserve_witness_staging(pk_, from);  // split straight into the backend's block
      ASSERT_GE(gpu->witness_split_memory().size(), split_capacity(pk_));
      expect_staged_proof(*gpu, from, gpu->witness_split_memory());
      std::vector<Fr> a(a_.size()), b(a_.size()), c(a_.size());
      const std::vector<Fr> z = synthesize(*circuit_, other_witness_seed_, pk_, a, b, c);
      CpuBackend cpu;
      cpu.prepare(pk_, {});
      expect_same_proof(prove(*gpu, pk_, a, b, c, z, *blinding_), prove(cpu, pk_, a, b, c, z, *blinding_));
    }
}

// With a fixed-base table of every array (the witness's MSMs then share fixed-base digits; L and
// H decompose their own at the table's window; the batch additions read each table's first row),
// direct and staged proofs are the CPU's; a backend preparing the same key later shares the tables;
// tables of two bucket sets beside arrays without give the same proof.
TEST_P(GpuProver, FixedBaseTablesGiveTheCpuProof) {
  SCOPED_TRACE(trace_);
  using zkpipe::policy::FixedBaseTable;
  using zkpipe::policy::KeyArray;
  const std::vector<FixedBaseTable> every_array{
      {KeyArray::a, 1}, {KeyArray::b1, 1}, {KeyArray::l, 1}, {KeyArray::h, 1}, {KeyArray::b2, 1}};
  CudaBackend tables;
  tables.prepare(pk_, every_array);
  expect_cpu_proof(prove_on(tables));
  expect_staged_proof(tables, WitnessHostMemory::pinned);
  CudaBackend sharing;
  sharing.prepare(pk_, every_array);
  expect_staged_proof(sharing, WitnessHostMemory::pageable);
  CudaBackend some;  // another key copy: tables of two sets for a, l and b2, beside plain b1 and h
  ProvingKey other_key = pk_;
  const std::vector<FixedBaseTable> two_sets{{KeyArray::a, 2}, {KeyArray::l, 2}, {KeyArray::b2, 2}};
  some.prepare(other_key, two_sets);
  expect_same_proof(prove(some, other_key, a_, b_, c_, z_, *blinding_), prove_on(tables));
}

// A prepared backend with its witness staging reserved allocates no device memory while it proves,
// with and without tables: an allocation inside the compute section would wait for all of the
// device's work, another worker's copies included. A backend gone before it proved the same way
// first, loading the kernels (lazily loaded modules take device memory too).
TEST_P(GpuProver, PreparedBackendAllocatesNothingWhileProving) {
  SCOPED_TRACE(trace_);
  using zkpipe::policy::FixedBaseTable;
  using zkpipe::policy::KeyArray;
  const std::vector<FixedBaseTable> no_tables, every_array{
      {KeyArray::a, 1}, {KeyArray::b1, 1}, {KeyArray::l, 1}, {KeyArray::h, 1}, {KeyArray::b2, 1}};
  for (const std::vector<FixedBaseTable>* tables : {&no_tables, &every_array}) {
    SCOPED_TRACE(tables->empty() ? "no tables" : "a table of every array");
    const auto prepared = [&] {
      auto gpu = std::make_unique<CudaBackend>();
      gpu->prepare(pk_, *tables);
      gpu->reserve_witness_staging(pk_, WitnessHostMemory::pinned);
      return gpu;
    };
    const auto staged_proof = [&](CudaBackend& gpu) {
      expect_staged_proof(gpu, WitnessHostMemory::pinned, gpu.witness_split_memory());
    };
    staged_proof(*prepared());
    const auto gpu = prepared();
    const size_t free_before = test::free_device_bytes();
    staged_proof(*gpu);
    EXPECT_EQ(test::free_device_bytes(), free_before);
  }
}

// The fixed-base tables' savings are estimated for the scalars each MSM multiplies: an array's
// option reads its own MSM's count alone (A's, B's for b1 and b2, L's), H's is the domain's whatever
// the witness, and the key's most scalars give what every variable would; table bytes never depend
// on the witness.
TEST_P(GpuProver, FixedBaseSavingsAreEstimatedForEachMsmsScalars) {
  SCOPED_TRACE(trace_);
  using zkpipe::policy::KeyArray;
  CudaBackend gpu;
  const MsmScalarCounts witness = msm_scalar_counts(z_, pk_), most = most_msm_scalars(pk_);
  const auto option = [&](const MsmScalarCounts& scalars, KeyArray array, uint32_t sets) {
    for (const auto& o : gpu.device_footprint(pk_, scalars).fixed_bases)
      if (o.table == zkpipe::policy::FixedBaseTable{array, sets}) return o;
    ADD_FAILURE() << "no option for " << zkpipe::policy::key_array_name(array) << " of " << sets << " set(s)";
    return zkpipe::policy::FixedBaseOption{};
  };
  MsmScalarCounts a_alone = most, b_alone = most, l_alone = most;
  a_alone.a = witness.a, b_alone.b = witness.b, l_alone.l = witness.l;
  for (uint32_t sets : {1u, 2u}) {
    EXPECT_EQ(option(witness, KeyArray::h, sets), option(most, KeyArray::h, sets));
    EXPECT_EQ(option(witness, KeyArray::a, sets), option(a_alone, KeyArray::a, sets));
    EXPECT_EQ(option(witness, KeyArray::b1, sets), option(b_alone, KeyArray::b1, sets));
    EXPECT_EQ(option(witness, KeyArray::b2, sets), option(b_alone, KeyArray::b2, sets));
    EXPECT_EQ(option(witness, KeyArray::l, sets), option(l_alone, KeyArray::l, sets));
    EXPECT_EQ(option(a_alone, KeyArray::b2, sets), option(most, KeyArray::b2, sets));
    EXPECT_EQ(option(b_alone, KeyArray::a, sets).table_bytes, option(witness, KeyArray::a, sets).table_bytes);
  }
}

// The calling thread's CPU seconds so far.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

// A thread that waits for the device sleeps rather than spin: once a CUDA backend is made, the
// device's flags say blocking sync, and waiting for a queue of NTTs (tenths of a second of device
// work) costs the waiting thread a small part of that time on its core.
TEST(CudaBackend, WaitsForTheDeviceWithoutSpinning) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const CudaBackend backend;
  unsigned flags = 0;
  CUDA_OK(cudaGetDeviceFlags(&flags));
  EXPECT_EQ(flags & cudaDeviceScheduleMask, unsigned(cudaDeviceScheduleBlockingSync));

  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ntt::Domain domain(22);
  Rng rng(seed);
  std::vector<Fr> values(domain.n);
  for (Fr& value : values) value = rng.field<Fr>();
  const cuda::CudaStream stream;
  cuda::DeviceBuffer<Fr> data(domain.n);
  data.upload(values, stream.get());
  ntt::CudaNtt transform;
  transform.ntt(data.get(), domain, stream.get());  // builds its tables
  stream.synchronize();
  for (int round = 0; round < 200; ++round) transform.ntt(data.get(), domain, stream.get());
  const auto wall_start = std::chrono::steady_clock::now();
  const double cpu_start = thread_cpu_seconds();
  stream.synchronize();
  const double cpu = thread_cpu_seconds() - cpu_start;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  ASSERT_GT(wall, 0.02) << "too little device work was queued to tell a sleeping wait from a spinning one";
  EXPECT_LT(cpu, 0.25 * wall) << "the wait took " << cpu << " s of CPU in " << wall << " s";
}

INSTANTIATE_TEST_SUITE_P(BuiltinCircuits, GpuProver,
                         ::testing::Values(std::make_pair(std::string("dense"), uint64_t{3000}),
                                           std::make_pair(std::string("poseidon-merkle"), uint64_t{6000})));

}  // namespace
}  // namespace zk::groth16
