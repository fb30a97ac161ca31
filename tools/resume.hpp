// resume.hpp — `zkpipe prove --resume`: which partitions of a job still need a proof, and the job
// over those partitions alone. A partition is done when its proof file and its public-inputs file
// both exist, parse and verify against the key; anything else (a file missing, corrupt or not
// verifying) is proved again and overwritten. The files of a done partition are never touched.
// Proof files are written atomically (engine/util/atomic_file.hpp), so a job killed at any point
// leaves every partition either done or not started, plus temporaries that resuming removes.
// Checking that a done partition proves *this* job's witness would need its synthesis; a proof of
// another witness that verifies (another --witness-seed, another .wtns of the same name) counts
// as done. A resumed job's trace numbers partitions as the whole job and its file names do, so
// they may reach past the sidecar's partition count (the partitions this run proved).
#pragma once
#include <cstdio>
#include <span>
#include <vector>

#include "engine/circom/circom_job.hpp"
#include "engine/groth16/keys.hpp"
#include "engine/pipeline/job.hpp"

namespace zkpipe::tools {

// The partitions (indices into `outputs`) without a verified proof, in order; removes the
// temporaries killed writers left next to every output. Says what it found on `log`.
std::vector<uint32_t> partitions_to_prove(std::span<const zk::circom::ProofOutputs> outputs,
                                          const zk::groth16::VerifyingKey& vk, std::FILE* log);

// `job` over `partitions` alone: its partition i synthesizes job's partition partitions[i].
zk::pipeline::Job job_of_partitions(const zk::pipeline::Job& job, std::vector<uint32_t> partitions);

}  // namespace zkpipe::tools
