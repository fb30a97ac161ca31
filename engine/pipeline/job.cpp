#include "engine/pipeline/job.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

#include "engine/circom/circom_job.hpp"
#include "engine/circom/wtns_file.hpp"
#include "engine/groth16/prover.hpp"
#include "engine/util/error.hpp"

namespace zk::pipeline {

Job builtin_job(const circuits::Circuit& circuit, const groth16::ProvingKey& pk, uint32_t partitions,
                uint64_t first_witness_seed) {
  Job job{circuit.spec().name, &pk, partitions, {}};
  job.synthesize = [&circuit, &pk, first_witness_seed](uint32_t partition, std::span<Fr> a, std::span<Fr> b,
                                                       std::span<Fr> c) {
    return groth16::synthesize(circuit, first_witness_seed + partition, pk, a, b, c);
  };
  job.first_witness = [&circuit, &pk, first_witness_seed] { return groth16::witness_of(circuit, first_witness_seed, pk); };
  return job;
}

Job replay_first_partition(const Job& job) {
  struct FirstPartition {
    std::once_flag synthesized;
    std::vector<Fr> a, b, c, z;
  };
  auto first = std::make_shared<FirstPartition>();
  Job replay = job;
  replay.synthesize = [&job, first](uint32_t, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c) {
    std::call_once(first->synthesized, [&] {
      first->a.resize(a.size()), first->b.resize(b.size()), first->c.resize(c.size());
      first->z = job.synthesize(0, first->a, first->b, first->c);
    });
    std::ranges::copy(first->a, a.begin());
    std::ranges::copy(first->b, b.begin());
    std::ranges::copy(first->c, c.begin());
    return first->z;
  };
  return replay;
}

Job circom_job(const std::filesystem::path& zkey, std::vector<std::filesystem::path> wtns,
               const std::optional<std::filesystem::path>& r1cs, const groth16::ProvingKey& pk) {
  if (wtns.empty()) fail("a circom job needs at least one witness file");
  Job job{"circom " + zkey.filename().string(), &pk, uint32_t(wtns.size()), {}};
  job.first_witness = [first = wtns.front()] { return circom::read_witness(first); };
  job.synthesize = [zkey, wtns = std::move(wtns), r1cs](uint32_t partition, std::span<Fr> a, std::span<Fr> b,
                                                        std::span<Fr> c) {
    auto file = circom::ZkeyFile::open(zkey);
    return circom::circom_rows(file, wtns.at(partition), r1cs, a, b, c);
  };
  return job;
}

}  // namespace zk::pipeline
