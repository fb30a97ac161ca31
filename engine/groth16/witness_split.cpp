// witness_split.cpp — the witness split for the MSMs (contract in witness_split.hpp).
#include "engine/groth16/witness_split.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "engine/util/error.hpp"
#include "kernels/util/parallel.hpp"

namespace zk::groth16 {

std::byte* SplitMemory::take_bytes(size_t bytes) {
  const size_t begin = (used_ + alignment - 1) / alignment * alignment;
  if (begin + bytes > block_.size())
    fail("witness split: {} more bytes at offset {} of a block of {} bytes (capacity() too small)", bytes, begin,
         block_.size());
  used_ = begin + bytes;
  return block_.data() + begin;
}

namespace {

// What an MSM does with a witness value: skips it (0), adds its base (1) or multiplies it.
enum class ScalarUse { skipped, added, multiplied };
ScalarUse use_of(const Fr& value, const Fr& one) {
  return value == one ? ScalarUse::added : value.is_zero() ? ScalarUse::skipped : ScalarUse::multiplied;
}

// z[first, z.size()) in parallel_blocks() blocks of 4096 entries or more, with the
// ones and significant entries before each block, counted on every core ([blocks]: in all).
struct BlockCounts {
  size_t first, n, blocks;
  std::vector<size_t> ones_before, significant_before;
  size_t begin(size_t block) const { return first + n * block / blocks; }
  WitnessCounts total() const {
    return {n - ones_before[blocks] - significant_before[blocks], ones_before[blocks], significant_before[blocks]};
  }
};

BlockCounts count_blocks(std::span<const Fr> z, size_t first) {
  const Fr one = Fr::one();
  const size_t n = z.size() - std::min(first, z.size());
  const size_t blocks = parallel_blocks(n, 4096);
  BlockCounts counts{first, n, blocks, std::vector<size_t>(blocks + 1, 0), std::vector<size_t>(blocks + 1, 0)};
  // Each block counts in registers and writes its counts once: neighbouring blocks' counts share
  // cache lines, which the cores would otherwise pass between them on every entry.
  parallel_for(blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block) {
      size_t ones = 0, significant = 0;
      for (size_t i = counts.begin(block); i < counts.begin(block + 1); ++i) {
        const ScalarUse use = use_of(z[i], one);
        ones += use == ScalarUse::added;
        significant += use == ScalarUse::multiplied;
      }
      counts.ones_before[block + 1] = ones;
      counts.significant_before[block + 1] = significant;
    }
  });
  std::partial_sum(counts.ones_before.begin(), counts.ones_before.end(), counts.ones_before.begin());
  std::partial_sum(counts.significant_before.begin(), counts.significant_before.end(), counts.significant_before.begin());
  return counts;
}

}  // namespace

WitnessSplit split_witness(std::span<const Fr> z, size_t first, SplitMemory& memory) {
  // Two passes over blocks of z on every core: count each block's ones and significant values,
  // then write each block's entries at its offsets, in index order.
  const Fr one = Fr::one();
  const BlockCounts counts = count_blocks(z, first);
  const WitnessCounts total = counts.total();
  WitnessSplit split;
  split.significant_scalars = memory.take<Fr>(total.significant);
  split.significant = memory.take<uint32_t>(total.significant);
  split.ones = memory.take<uint32_t>(total.ones);
  parallel_for(counts.blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block) {
      size_t next_one = counts.ones_before[block], next_significant = counts.significant_before[block];
      for (size_t i = counts.begin(block); i < counts.begin(block + 1); ++i) {
        const auto index = static_cast<uint32_t>(i - first);
        switch (use_of(z[i], one)) {
          case ScalarUse::added: split.ones[next_one++] = index; break;
          case ScalarUse::multiplied:
            split.significant[next_significant] = index;
            split.significant_scalars[next_significant++] = z[i];
            break;
          case ScalarUse::skipped: break;
        }
      }
    }
  });
  return split;
}

namespace {

// The positions of an ascending index list whose index an ascending `skip` list does not name,
// in parallel_blocks() blocks of the list of 4096 entries or more, with the kept
// positions before each block counted on every core ([blocks]: in all).
struct KeptPositions {
  std::span<const uint32_t> indices, skip;
  size_t blocks;
  std::vector<size_t> kept_before;
  size_t begin(size_t block) const { return indices.size() * block / blocks; }
  size_t total() const { return kept_before[blocks]; }
  // visit(position) for each kept position of the block, in order.
  template <class Visit>
  void for_each(size_t block, Visit&& visit) const {
    if (begin(block) == begin(block + 1)) return;
    auto next_skip = std::ranges::lower_bound(skip, indices[begin(block)]);
    for (size_t k = begin(block); k < begin(block + 1); ++k) {
      while (next_skip != skip.end() && *next_skip < indices[k]) ++next_skip;
      if (next_skip == skip.end() || *next_skip != indices[k]) visit(k);
    }
  }
};

KeptPositions kept_positions(std::span<const uint32_t> indices, std::span<const uint32_t> skip) {
  const size_t blocks = parallel_blocks(indices.size(), 4096);
  KeptPositions kept{indices, skip, blocks, std::vector<size_t>(blocks + 1, 0)};
  parallel_for(blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block) {
      size_t count = 0;  // in a register, as count_blocks's
      kept.for_each(block, [&](size_t) { ++count; });
      kept.kept_before[block + 1] = count;
    }
  });
  std::partial_sum(kept.kept_before.begin(), kept.kept_before.end(), kept.kept_before.begin());
  return kept;
}

}  // namespace

WitnessSplit split_without(const WitnessSplit& split, std::span<const uint32_t> skip, SplitMemory& memory) {
  const KeptPositions significant = kept_positions(split.significant, skip), ones = kept_positions(split.ones, skip);
  WitnessSplit kept;
  kept.significant_scalars = memory.take<Fr>(significant.total());
  kept.significant = memory.take<uint32_t>(significant.total());
  kept.ones = memory.take<uint32_t>(ones.total());
  parallel_for(significant.blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block) {
      size_t next = significant.kept_before[block];
      significant.for_each(block, [&](size_t k) {
        kept.significant[next] = split.significant[k];
        kept.significant_scalars[next++] = split.significant_scalars[k];
      });
    }
  });
  parallel_for(ones.blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block) {
      size_t next = ones.kept_before[block];
      ones.for_each(block, [&](size_t k) { kept.ones[next++] = split.ones[k]; });
    }
  });
  return kept;
}

WitnessCounts count_witness(std::span<const Fr> z) { return count_blocks(z, 0).total(); }

WitnessCounts count_witness_at(std::span<const Fr> z, std::span<const uint32_t> indices) {
  const Fr one = Fr::one();
  WitnessCounts counts;
  for (uint32_t i : indices) {
    if (i >= z.size()) fail("count_witness_at: index {} of a witness of {} entries", i, z.size());
    switch (use_of(z[i], one)) {
      case ScalarUse::added: ++counts.ones; break;
      case ScalarUse::multiplied: ++counts.significant; break;
      case ScalarUse::skipped: ++counts.zeros; break;
    }
  }
  return counts;
}

MsmScalarCounts msm_scalar_counts(std::span<const Fr> z, const ProvingKey& pk) {
  if (z.size() != pk.num_vars) fail("msm_scalar_counts: a witness of {} entries for a key of {} variables", z.size(), pk.num_vars);
  const uint64_t all = count_witness(z).significant;
  const uint64_t b = pk.splits_b_query() ? all - count_witness_at(z, pk.b_absent).significant : all;
  const uint64_t publics = count_witness(z.first(pk.num_public + 1)).significant;  // ONE and the public inputs
  return {all, b, all - publics, pk.domain_size()};
}

MsmScalarCounts most_msm_scalars(const ProvingKey& pk) {
  return {pk.num_vars, pk.b_query_vars(), pk.num_vars - pk.num_public - 1u, pk.domain_size()};
}

size_t split_capacity(const ProvingKey& pk) {
  const size_t b_entries = pk.splits_b_query() ? pk.b_query_vars() : 0;  // B's own split
  return SplitMemory::capacity(pk.num_vars + b_entries + (pk.num_vars - pk.num_public - 1), 3);
}

ProofSplits split_for_proof(std::span<const Fr> z, const ProvingKey& pk, std::span<std::byte> into) {
  ProofSplits splits{into.empty() ? SplitMemory(split_capacity(pk)) : SplitMemory(into), {}, {}, {}};
  splits.all = split_witness(z, 0, splits.memory);
  splits.b = pk.splits_b_query() ? split_without(splits.all, pk.b_absent, splits.memory) : splits.all;
  splits.priv = split_witness(z, pk.num_public + 1, splits.memory);
  return splits;
}

}  // namespace zk::groth16
