// Contract: LeakyLeasePolicy is a deliberately broken test double for the teeth test, never used
// outside tests/properties: the real policy, except that an attempt that fails while holding a
// pinned slab never gives its lease back. The lease stays recorded against the failed partition
// (what release_holdings would do if it forgot the slab), while the real pool reissues the slab.
// The properties must catch it and RapidCheck must shrink it to a small case.
#pragma once

#include <utility>
#include <vector>

#include "policy/scheduling_policy.hpp"

namespace zkpipe::properties {

class LeakyLeasePolicy : public policy::SchedulingPolicy {
 public:
  using SchedulingPolicy::SchedulingPolicy;

  void attempt_failed(policy::PartitionId partition) {
    for (const auto& lease : SchedulingPolicy::slab_leases())
      if (lease.first == partition) leaked_.push_back(lease);
    SchedulingPolicy::attempt_failed(partition);
  }

  std::vector<std::pair<policy::PartitionId, policy::SlabId>> slab_leases() const {
    auto leases = SchedulingPolicy::slab_leases();
    leases.insert(leases.end(), leaked_.begin(), leaked_.end());
    return leases;
  }

 private:
  std::vector<std::pair<policy::PartitionId, policy::SlabId>> leaked_;
};

}  // namespace zkpipe::properties
