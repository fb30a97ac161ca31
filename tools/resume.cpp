#include "tools/resume.hpp"

#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/util/atomic_file.hpp"
#include "engine/util/error.hpp"
#include "kernels/util/parallel.hpp"

namespace zkpipe::tools {
namespace fs = std::filesystem;
using zk::circom::ProofOutputs;

namespace {

// Why a partition's files are not a verified proof: "" when they are not both there (not proved
// yet), else what is wrong with them; nullopt when they are a verified proof.
std::optional<std::string> unproved_reason(const ProofOutputs& files, const zk::groth16::VerifyingKey& vk) {
  if (!fs::exists(files.proof) || !fs::exists(files.public_inputs)) return std::string();
  try {
    const auto verdict = zk::groth16::verify(vk, zk::groth16::read_proof_json(files.proof),
                                             zk::groth16::read_public_json(files.public_inputs));
    if (verdict) return std::nullopt;
    return fmt::format("{} does not verify with {} ({})", files.proof.string(), files.public_inputs.string(), verdict.reason);
  } catch (const zk::Error& e) {
    return e.what();
  }
}

}  // namespace

std::vector<uint32_t> partitions_to_prove(std::span<const ProofOutputs> outputs, const zk::groth16::VerifyingKey& vk,
                                          std::FILE* log) {
  size_t partials = 0;
  for (const ProofOutputs& files : outputs)
    partials += zk::remove_stale_partials(files.proof) + zk::remove_stale_partials(files.public_inputs);
  std::vector<std::optional<std::string>> reasons(outputs.size());
  zk::parallel_for(outputs.size(), [&](size_t begin, size_t end) {  // a pairing check per proof
    for (size_t partition = begin; partition < end; ++partition) reasons[partition] = unproved_reason(outputs[partition], vk);
  });
  std::vector<uint32_t> remaining;
  for (uint32_t partition = 0; partition < outputs.size(); ++partition) {
    if (!reasons[partition]) continue;
    remaining.push_back(partition);
    if (log && !reasons[partition]->empty()) fmt::print(log, "prove: resume: {}; proving it again\n", *reasons[partition]);
  }
  if (log)
    fmt::print(log, "prove: resume: {} of {} partitions have verified proofs; {} to prove{}\n",
               outputs.size() - remaining.size(), outputs.size(), remaining.size(),
               partials ? fmt::format("; removed {} partial files of killed writes", partials) : std::string());
  return remaining;
}

zk::pipeline::Job job_of_partitions(const zk::pipeline::Job& job, std::vector<uint32_t> partitions) {
  zk::pipeline::Job subset = job;
  subset.partitions = uint32_t(partitions.size());
  subset.witness = [witness = job.witness, partitions](uint32_t partition) { return witness(partitions.at(partition)); };
  subset.rows = [rows = job.rows, partitions = std::move(partitions)](
                    uint32_t partition, std::span<const zk::pipeline::Fr> z, std::span<zk::pipeline::Fr> a,
                    std::span<zk::pipeline::Fr> b, std::span<zk::pipeline::Fr> c) { rows(partitions.at(partition), z, a, b, c); };
  return subset;
}

}  // namespace zkpipe::tools
