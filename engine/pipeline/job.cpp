#include "engine/pipeline/job.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "engine/circom/circom_job.hpp"
#include "engine/groth16/prover.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "engine/util/error.hpp"

namespace zk::pipeline {

Job builtin_job(const circuits::Circuit& circuit, const groth16::ProvingKey& pk, uint32_t partitions,
                uint64_t first_witness_seed) {
  Job job{circuit.spec().name, &pk, partitions, {}, {}};
  job.witness = [&circuit, &pk, first_witness_seed](uint32_t partition) {
    return groth16::witness_of(circuit, first_witness_seed + partition, pk);
  };
  job.rows = [&pk](uint32_t, std::span<const Fr> z, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c) {
    r1cs::evaluate_rows(pk.constraints, z, pk.num_public, a, b, c);
  };
  return job;
}

Job replay_first_partition(const Job& job, std::vector<Fr> first_witness) {
  struct FirstPartition {
    std::once_flag witnessed, evaluated;
    std::vector<Fr> z, a, b, c;
  };
  auto first = std::make_shared<FirstPartition>();
  first->z = std::move(first_witness);
  Job replay = job;
  replay.witness = [&job, first](uint32_t) {
    std::call_once(first->witnessed, [&] {
      if (first->z.empty()) first->z = job.witness(0);
    });
    return first->z;
  };
  replay.rows = [&job, first](uint32_t, std::span<const Fr> z, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c) {
    std::call_once(first->evaluated, [&] {
      first->a.resize(a.size()), first->b.resize(b.size()), first->c.resize(c.size());
      job.rows(0, z, first->a, first->b, first->c);
    });
    std::ranges::copy(first->a, a.begin());
    std::ranges::copy(first->b, b.begin());
    std::ranges::copy(first->c, c.begin());
  };
  return replay;
}

Job circom_job(const std::filesystem::path& zkey, std::vector<std::filesystem::path> wtns,
               const std::optional<std::filesystem::path>& r1cs, const groth16::ProvingKey& pk) {
  if (wtns.empty()) fail("a circom job needs at least one witness file");
  Job job{"circom " + zkey.filename().string(), &pk, uint32_t(wtns.size()), {}, {}};
  job.witness = [zkey, wtns = std::move(wtns)](uint32_t partition) {
    return circom::read_key_witness(circom::ZkeyFile::open(zkey), wtns.at(partition));
  };
  job.rows = [zkey, r1cs](uint32_t, std::span<const Fr> z, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c) {
    auto file = circom::ZkeyFile::open(zkey);
    circom::evaluate_circom_rows(file, z, r1cs, a, b, c);
  };
  return job;
}

}  // namespace zk::pipeline
