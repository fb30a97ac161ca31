// witness_split.hpp — supraseal's split of a Groth16 witness for the MSMs: entries equal to 0 are
// skipped, entries equal to 1 go to batch addition of their bases, the rest ("significant") to the
// tail MSM with their values as scalars. A split may also leave out entries whose bases are all at
// infinity (the variables absent from B, for B1 and B2). Splits are computed on every core the
// calling thread may use (worker_threads()) and list their indices in ascending order, as streamed
// bases need.
//
// A proof's splits are laid out one array after another in one block (SplitMemory): the scalars,
// significant indices and ones of the whole witness, then those of its B split (where the key
// splits B), then those of its private part, each array aligned for a device copy. The block is
// the caller's (a GPU backend's page-locked staging buffer: the split is then staged by one copy,
// with no second pass over host memory) or the split's own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/groth16/keys.hpp"
#include "kernels/util/default_init.hpp"

namespace zk::groth16 {

using bls12_381::Fr;

// One block that a proof's split arrays are taken from in order, each `alignment`-aligned
// (relative to the block's start). Move-only; arrays taken stay where they are when it moves.
class SplitMemory {
 public:
  static constexpr size_t alignment = 256;
  // The most bytes `splits` splits of `entries` witness entries in all take: every entry is a
  // scalar and an index, or an index alone (a one), or nothing (a zero); each split three arrays.
  static size_t capacity(size_t entries, size_t splits) {
    return entries * (sizeof(Fr) + sizeof(uint32_t)) + 3 * splits * alignment;
  }

  SplitMemory() = default;
  explicit SplitMemory(std::span<std::byte> borrowed) : block_(borrowed) {}
  explicit SplitMemory(size_t bytes) : own_(bytes), block_(own_.data(), own_.size()) {}
  SplitMemory(SplitMemory&&) noexcept = default;
  SplitMemory& operator=(SplitMemory&&) noexcept = default;

  // `count` uninitialized elements; throws zk::Error when the block cannot hold them.
  template <class T>
  std::span<T> take(size_t count) {
    return {reinterpret_cast<T*>(take_bytes(count * sizeof(T))), count};
  }
  // The bytes taken so far, from the block's start: what one copy must move.
  std::span<const std::byte> used() const { return block_.first(used_); }

 private:
  std::byte* take_bytes(size_t bytes);

  UninitializedVector<std::byte> own_;
  std::span<std::byte> block_;
  size_t used_ = 0;
};

// Which witness entries are 1 and which are neither 0 nor 1 ("significant"), by index.
struct WitnessSplit {
  std::span<uint32_t> ones, significant;
  std::span<Fr> significant_scalars;
};
// Splits z[first, z.size()) with indices relative to `first`, its arrays taken from `memory`.
WitnessSplit split_witness(std::span<const Fr> z, size_t first, SplitMemory& memory);
// `split` less the entries whose indices `skip` names (ascending), its arrays taken from `memory`;
// on every core, reading the split's arrays where a second split_witness would read all of z.
WitnessSplit split_without(const WitnessSplit& split, std::span<const uint32_t> skip, SplitMemory& memory);

// How many entries of z are 0, 1 and anything else.
struct WitnessCounts {
  size_t zeros = 0, ones = 0, significant = 0;
};
WitnessCounts count_witness(std::span<const Fr> z);
// The same of the entries of z that `indices` name.
WitnessCounts count_witness_at(std::span<const Fr> z, std::span<const uint32_t> indices);

// The splits one proof's MSMs take, in their memory: of all of z (A), of z less the variables
// absent from B where the key splits B (B1, B2; else the same arrays as `all`), and of z's private
// part (L).
struct ProofSplits {
  SplitMemory memory;
  WitnessSplit all, b, priv;
};
// In `into` where given (at least capacity() bytes for the key), else in the splits' own memory.
ProofSplits split_for_proof(std::span<const Fr> z, const ProvingKey& pk, std::span<std::byte> into = {});
// SplitMemory::capacity for a proof of `pk`.
size_t split_capacity(const ProvingKey& pk);

// The scalars each of a proof's MSMs multiplies (its split's significant entries): A's of all of
// z, B1's and B2's of its B split, L's of z's private part, H's the domain's.
struct MsmScalarCounts {
  uint64_t a = 0, b = 0, l = 0, h = 0;
  bool operator==(const MsmScalarCounts&) const = default;
};
// Those of the proof of witness z; and the most any witness gives (every entry significant).
MsmScalarCounts msm_scalar_counts(std::span<const Fr> z, const ProvingKey& pk);
MsmScalarCounts most_msm_scalars(const ProvingKey& pk);

}  // namespace zk::groth16
