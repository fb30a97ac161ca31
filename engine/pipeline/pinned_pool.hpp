// pinned_pool.hpp — the pool of slabs that synthesis writes a/b/c into and GPU workers copy from.
// Every slab (one partition's a/b/c) is allocated once, at construction, and reserved in the
// MemoryBudget: pinning is slow (cudaHostAlloc of 4 GiB takes 1.5 s on the H200), reuse is free.
// What the slabs are, memory():
//  - pinned:   page-locked by cudaHostAlloc (a CUDA build on a machine with a device);
//  - pageable: no device to pin for (no CUDA in this build, or no device): the slabs are aligned
//              pageable memory, the "pageable fallback", and the pool works as a pool all the same;
//  - none:     pinning failed (cudaHostAlloc refused, or an injected refusal): the pool holds no
//              slabs, fallback_reason() says why, and the engine stages in per-partition pageable
//              memory, warns, and tells the scheduling policy.
// The slabs form `pools` pools of equal size, numbered as the scheduling policy numbers them
// (slab s in pool s / slabs-per-pool): one pool for the host, or one per GPU, whose slabs only that
// GPU's workers copy from (Lease::pool() names it); high-water marks are kept per pool too.
// Which slab a partition gets is the policy's decision; lease(slab) hands that slab out and waits
// while it is still leased (a Lease returned outside the policy's lock), so no slab is ever held
// twice. A Lease returns its slab when destroyed. Thread-safe; Leases must not outlive the pool.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/pipeline/host_memory.hpp"
#include "engine/pipeline/memory_budget.hpp"

namespace zk::pipeline {

class PinnedPool {
 public:
  enum class Memory { pinned, pageable, none };

  // `slabs` blocks of `slab_bytes` in `pools` pools (`slabs` a multiple of `pools`), reserved in
  // `budget` (throws zk::Error when they do not fit). `refuse_pinning` injects a refused pinning
  // (pinned_allocation_failure, drawn by the engine from the job's fault injector): where a CUDA
  // device is present a real cudaHostAlloc is refused (of an impossible size), else the refusal is
  // the fake device's.
  PinnedPool(uint32_t slabs, uint64_t slab_bytes, MemoryBudget& budget, bool refuse_pinning = false,
             uint32_t pools = 1);
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  class Lease {
   public:
    uint32_t slab() const { return held_.get_deleter().slab; }
    uint32_t pool() const { return held_->pool_of(slab()); }
    std::span<bls12_381::Fr> elements() const { return held_->slabs_[slab()].elements(); }

   private:
    friend class PinnedPool;
    struct GiveBack {
      uint32_t slab;
      void operator()(PinnedPool* pool) const { pool->give_back(slab); }
    };
    Lease(PinnedPool* pool, uint32_t slab) : held_(pool, GiveBack{slab}) {}
    std::unique_ptr<PinnedPool, GiveBack> held_;  // gives the slab back when destroyed or replaced
  };

  Lease lease(uint32_t slab);

  Memory memory() const { return memory_; }
  const std::string& fallback_reason() const { return fallback_reason_; }
  uint32_t slabs() const { return static_cast<uint32_t>(slabs_.size()); }
  uint32_t pools() const { return pools_; }
  uint32_t leased_max() const;               // of all pools together
  uint32_t leased_max(uint32_t pool) const;  // of one pool
  double allocation_seconds() const { return allocation_seconds_; }

 private:
  void give_back(uint32_t slab);
  uint32_t pool_of(uint32_t slab) const { return slab / slabs_per_pool_; }
  uint32_t pools_, slabs_per_pool_;
  std::vector<HostBlock> slabs_;
  MemoryBudget::Reservation reservation_;
  Memory memory_ = Memory::pinned;
  std::string fallback_reason_;
  double allocation_seconds_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<bool> leased_;
  uint32_t leased_now_ = 0, leased_max_ = 0;
  std::vector<uint32_t> pool_leased_now_, pool_leased_max_;
};

}  // namespace zk::pipeline
