// witness_split.cpp — the witness split for the MSMs (contract in witness_split.hpp).
#include "engine/groth16/witness_split.hpp"

#include <algorithm>
#include <atomic>
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

WitnessSplit split_witness(std::span<const Fr> z, size_t first, SplitMemory& memory) {
  // Two passes over blocks of z on every core: count each block's ones and significant values,
  // then write each block's entries at its offsets, in index order.
  const Fr one = Fr::one();
  const size_t n = z.size() - std::min(first, z.size());
  const size_t blocks = std::max<size_t>(1, std::min(worker_threads(), n / 4096));
  auto block_begin = [&](size_t block) { return first + n * block / blocks; };
  std::vector<size_t> ones_before(blocks + 1, 0), significant_before(blocks + 1, 0);
  parallel_for(blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block)
      for (size_t i = block_begin(block); i < block_begin(block + 1); ++i) {
        if (z[i] == one) ++ones_before[block + 1];
        else if (!z[i].is_zero()) ++significant_before[block + 1];
      }
  });
  for (size_t block = 0; block < blocks; ++block) {
    ones_before[block + 1] += ones_before[block];
    significant_before[block + 1] += significant_before[block];
  }
  WitnessSplit split;
  split.significant_scalars = memory.take<Fr>(significant_before[blocks]);
  split.significant = memory.take<uint32_t>(significant_before[blocks]);
  split.ones = memory.take<uint32_t>(ones_before[blocks]);
  split.zeros = n - ones_before[blocks] - significant_before[blocks];
  parallel_for(blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block) {
      size_t next_one = ones_before[block], next_significant = significant_before[block];
      for (size_t i = block_begin(block); i < block_begin(block + 1); ++i) {
        auto index = static_cast<uint32_t>(i - first);
        if (z[i] == one) {
          split.ones[next_one++] = index;
        } else if (!z[i].is_zero()) {
          split.significant[next_significant] = index;
          split.significant_scalars[next_significant++] = z[i];
        }
      }
    }
  });
  return split;
}

WitnessCounts count_witness(std::span<const Fr> z) {
  const Fr one = Fr::one();
  std::atomic<size_t> zeros{0}, ones{0};
  parallel_for(z.size(), [&](size_t begin, size_t end) {
    size_t block_zeros = 0, block_ones = 0;
    for (size_t i = begin; i < end; ++i) {
      if (z[i].is_zero()) ++block_zeros;
      else if (z[i] == one) ++block_ones;
    }
    zeros += block_zeros;
    ones += block_ones;
  });
  return {zeros, ones, z.size() - zeros - ones};
}

size_t split_capacity(const ProvingKey& pk) { return SplitMemory::capacity(pk.num_vars, pk.num_vars - pk.num_public - 1); }

ProofSplits split_for_proof(std::span<const Fr> z, const ProvingKey& pk, std::span<std::byte> into) {
  ProofSplits splits{into.empty() ? SplitMemory(split_capacity(pk)) : SplitMemory(into), {}, {}};
  splits.all = split_witness(z, 0, splits.memory);
  splits.priv = split_witness(z, pk.num_public + 1, splits.memory);
  return splits;
}

}  // namespace zk::groth16
