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

// z[first, z.size()) in blocks, one per core at most and none smaller than 4096 entries, less the
// entries `skip` names (ascending, absolute), with the ones and significant entries before each
// block, counted on every core ([blocks]: in all).
struct BlockCounts {
  size_t first, n, blocks;
  std::span<const uint32_t> skip;
  std::vector<size_t> ones_before, significant_before, skipped_before;
  size_t begin(size_t block) const { return first + n * block / blocks; }
  WitnessCounts total() const {
    return {n - skipped_before[blocks] - ones_before[blocks] - significant_before[blocks], ones_before[blocks],
            significant_before[blocks]};
  }
  // visit(i) for each entry i of the block that `skip` does not name, in order.
  template <class Visit>
  void for_each_kept(size_t block, Visit&& visit) const {
    auto next_skip = std::ranges::lower_bound(skip, begin(block));
    for (size_t i = begin(block); i < begin(block + 1); ++i) {
      if (next_skip != skip.end() && *next_skip == i) ++next_skip;
      else visit(i);
    }
  }
};

BlockCounts count_blocks(std::span<const Fr> z, size_t first, std::span<const uint32_t> skip) {
  const Fr one = Fr::one();
  const size_t n = z.size() - std::min(first, z.size());
  const size_t blocks = std::max<size_t>(1, std::min(worker_threads(), n / 4096));
  BlockCounts counts{first, n, blocks, skip, std::vector<size_t>(blocks + 1, 0), std::vector<size_t>(blocks + 1, 0),
                     std::vector<size_t>(blocks + 1, 0)};
  parallel_for(blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block) {
      size_t kept = 0;
      counts.for_each_kept(block, [&](size_t i) {
        ++kept;
        if (z[i] == one) ++counts.ones_before[block + 1];
        else if (!z[i].is_zero()) ++counts.significant_before[block + 1];
      });
      counts.skipped_before[block + 1] = counts.begin(block + 1) - counts.begin(block) - kept;
    }
  });
  for (auto* before : {&counts.ones_before, &counts.significant_before, &counts.skipped_before})
    std::partial_sum(before->begin(), before->end(), before->begin());
  return counts;
}

}  // namespace

WitnessSplit split_witness(std::span<const Fr> z, size_t first, SplitMemory& memory, std::span<const uint32_t> skip) {
  // Two passes over blocks of z on every core: count each block's ones and significant values,
  // then write each block's entries at its offsets, in index order.
  const Fr one = Fr::one();
  const BlockCounts counts = count_blocks(z, first, skip);
  const WitnessCounts total = counts.total();
  WitnessSplit split;
  split.significant_scalars = memory.take<Fr>(total.significant);
  split.significant = memory.take<uint32_t>(total.significant);
  split.ones = memory.take<uint32_t>(total.ones);
  split.zeros = total.zeros;
  parallel_for(counts.blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block) {
      size_t next_one = counts.ones_before[block], next_significant = counts.significant_before[block];
      counts.for_each_kept(block, [&](size_t i) {
        auto index = static_cast<uint32_t>(i - first);
        if (z[i] == one) {
          split.ones[next_one++] = index;
        } else if (!z[i].is_zero()) {
          split.significant[next_significant] = index;
          split.significant_scalars[next_significant++] = z[i];
        }
      });
    }
  });
  return split;
}

WitnessCounts count_witness(std::span<const Fr> z) { return count_blocks(z, 0, {}).total(); }

size_t split_capacity(const ProvingKey& pk) {
  const size_t b_entries = pk.splits_b_query() ? pk.num_vars - pk.b_absent.size() : 0;
  return SplitMemory::capacity(pk.num_vars + b_entries + (pk.num_vars - pk.num_public - 1), 3);
}

ProofSplits split_for_proof(std::span<const Fr> z, const ProvingKey& pk, std::span<std::byte> into) {
  ProofSplits splits{into.empty() ? SplitMemory(split_capacity(pk)) : SplitMemory(into), {}, {}, {}};
  splits.all = split_witness(z, 0, splits.memory);
  splits.b = pk.splits_b_query() ? split_witness(z, 0, splits.memory, pk.b_absent) : splits.all;
  splits.priv = split_witness(z, pk.num_public + 1, splits.memory);
  return splits;
}

}  // namespace zk::groth16
