// job.hpp — what the engine proves: one proving key and N partitions, independent proofs of one
// circuit with different witnesses (as a Filecoin proof's partitions). A partition's synthesis is
// its witness z (Job::witness) and then its rows a, b, c (Job::rows, pk.domain_size() each) written
// straight into the memory the engine hands it (a pinned slab or pageable memory). Both are called
// from several synthesis threads at once and throw zk::Error for a witness that cannot be made or
// read, or that does not satisfy the circuit. The engine also asks for partition 0's witness before
// proving where its estimates need one (replayed by the GPU stage alone; a job makes it again).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/circuits/circuit.hpp"
#include "engine/groth16/keys.hpp"

namespace zk::pipeline {

using bls12_381::Fr;

struct Job {
  std::string name;  // the circuit, for messages and the trace's run name
  const groth16::ProvingKey* pk = nullptr;
  uint32_t partitions = 1;
  std::function<std::vector<Fr>(uint32_t partition)> witness;
  std::function<void(uint32_t partition, std::span<const Fr> z, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c)> rows;

  // Bytes of a, b, c together, and of the assignment z.
  uint64_t abc_bytes() const { return 3 * pk->domain_size() * sizeof(Fr); }
  uint64_t witness_bytes() const { return uint64_t{pk->num_vars} * sizeof(Fr); }
};

// Partition i of a built-in circuit proves the witness of seed first_witness_seed + i, so one
// partition proves exactly what `zkpipe prove --witness-seed` proves. `circuit` and `pk` must
// outlive the job.
Job builtin_job(const circuits::Circuit& circuit, const groth16::ProvingKey& pk, uint32_t partitions,
                uint64_t first_witness_seed);

// `job` with every partition given partition 0's witness and rows, each made once on first use (the
// witness: `first_witness` where given) and copied after that (StageAlone::gpu). `job` must outlive
// the result.
Job replay_first_partition(const Job& job, std::vector<Fr> first_witness = {});

// A circom circuit: partition i proves the witness in wtns[i] (read when it is synthesized; the
// same file may appear more than once), rows evaluated from the .zkey; with `r1cs`, every
// constraint is checked first. A witness that does not satisfy the circuit fails its partition
// alone, with an error naming the file. `pk` is the .zkey's key and must outlive the job; check
// the witness files with circom::check_witnesses_fit_key before proving.
Job circom_job(const std::filesystem::path& zkey, std::vector<std::filesystem::path> wtns,
               const std::optional<std::filesystem::path>& r1cs, const groth16::ProvingKey& pk);

}  // namespace zk::pipeline
