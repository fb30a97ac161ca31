#include "engine/pipeline/pinned_pool.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace zk::pipeline {

PinnedPool::PinnedPool(uint32_t slabs, uint64_t slab_bytes, MemoryBudget& budget, bool refuse_pinning, uint32_t pools)
    : pools_(pools),
      slabs_per_pool_(pools ? slabs / pools : 0),
      reservation_(budget.reserve(uint64_t{slabs} * slab_bytes, fmt::format("the pinned pool of {} slabs", slabs))) {
  if (pools == 0 || slabs % pools != 0)
    throw std::logic_error(fmt::format("pinned pool: {} slabs cannot form {} pools of one size", slabs, pools));
  auto start = std::chrono::steady_clock::now();
  if (refuse_pinning) {
    memory_ = Memory::none;
    fallback_reason_ = "the fake device refused to pin host memory (an injected pinned allocation failure)";
    // Where pinning is possible, CUDA itself refuses: a slab's cudaHostAlloc asks for 1 PiB.
    if (std::string why; HostBlock::pinning_available() && !HostBlock::try_pinned(size_t{1} << 50, why))
      fallback_reason_ = "an injected pinned allocation failure: " + why;
  } else if (!HostBlock::pinning_available(&fallback_reason_)) {
    memory_ = Memory::pageable;
    for (uint32_t slab = 0; slab < slabs; ++slab) slabs_.push_back(HostBlock::pageable(slab_bytes));
  } else {
    while (slabs_.size() < slabs && memory_ != Memory::none) {
      auto block = HostBlock::try_pinned(slab_bytes, fallback_reason_);
      if (block) slabs_.push_back(std::move(*block));
      else memory_ = Memory::none;
    }
  }
  if (memory_ == Memory::none) {  // all slabs or none: the policy stages one way for the whole job
    slabs_.clear();
    reservation_ = {};
  }
  allocation_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  leased_.assign(slabs_.size(), false);
  pool_leased_now_.assign(pools_, 0);
  pool_leased_max_.assign(pools_, 0);
}

PinnedPool::Lease PinnedPool::lease(uint32_t slab) {
  std::unique_lock lock(mutex_);
  if (slab >= slabs_.size())
    throw std::logic_error(fmt::format("pinned pool: slab {} leased but the pool has {}", slab, slabs_.size()));
  returned_.wait(lock, [&] { return !leased_[slab]; });
  leased_[slab] = true;
  leased_max_ = std::max(leased_max_, ++leased_now_);
  const uint32_t pool = pool_of(slab);
  pool_leased_max_[pool] = std::max(pool_leased_max_[pool], ++pool_leased_now_[pool]);
  return Lease(this, slab);
}

void PinnedPool::give_back(uint32_t slab) {
  {
    std::lock_guard lock(mutex_);
    leased_[slab] = false;
    --leased_now_;
    --pool_leased_now_[pool_of(slab)];
  }
  returned_.notify_all();
}

uint32_t PinnedPool::leased_max() const {
  std::lock_guard lock(mutex_);
  return leased_max_;
}

uint32_t PinnedPool::leased_max(uint32_t pool) const {
  std::lock_guard lock(mutex_);
  return pool_leased_max_.at(pool);
}

}  // namespace zk::pipeline
