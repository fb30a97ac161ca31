// witness_split.hpp — supraseal's split of a Groth16 witness for the MSMs: entries equal to 0 are
// skipped, entries equal to 1 go to batch addition of their bases, the rest ("significant") to the
// tail MSM with their values as scalars. Both splits are computed on every core the calling thread
// may use (worker_threads()) and list their indices in ascending order, as streamed bases need.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/groth16/keys.hpp"
#include "kernels/util/default_init.hpp"

namespace zk::groth16 {

using bls12_381::Fr;

// Which witness entries are 0, 1 or anything else ("significant"), by index.
struct WitnessSplit {
  UninitializedVector<uint32_t> ones, significant;
  UninitializedVector<Fr> significant_scalars;
  size_t zeros = 0;
};
// Splits z[first, z.size()) with indices relative to `first`.
WitnessSplit split_witness(std::span<const Fr> z, size_t first = 0);

// The splits one proof's MSMs take: of all of z (A, B1, B2) and of its private part (L).
struct ProofSplits {
  WitnessSplit all, priv;
};
ProofSplits split_for_proof(std::span<const Fr> z, const ProvingKey& pk);

}  // namespace zk::groth16
