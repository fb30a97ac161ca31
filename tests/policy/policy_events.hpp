// Contract: the RapidCheck side of PolicyHarness (policy_harness.hpp): random HarnessSettings
// (1-32 partitions, 1-16 synthesis threads, 1-8 slabs, one pool per host or per GPU, a budget of
// 1-8 partitions, in-flight limit 1-8, pinned or pageable, 1-8 GPUs x 1-3 workers, retry limit
// 0-3), and rc::state commands, each an event of the pipeline or a fault, fault-free events
// weighted above faults. Used by the property suite (tests/properties) and the policy's own tests.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <utility>

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include "policy_harness.hpp"

namespace zkpipe::properties {

inline rc::Gen<HarnessSettings> arbitrary_harness_settings() {
  return rc::gen::exec([] {
    HarnessSettings settings;
    policy::PolicySettings& p = settings.policy;
    p.partitions = *rc::gen::inRange<std::uint32_t>(1, 33);
    p.partition_host_bytes = *rc::gen::inRange<std::uint64_t>(1, 5) * (512ull << 20);  // 512 MiB steps
    p.host_budget_bytes = p.partition_host_bytes * *rc::gen::inRange<std::uint64_t>(1, 9);
    p.partitions_in_flight_max = *rc::gen::inRange<std::uint32_t>(1, 9);
    p.staging = *rc::gen::element(policy::Staging::pinned, policy::Staging::pageable);
    p.pool_slabs = *rc::gen::inRange<std::uint32_t>(1, 9);
    p.gpus = *rc::gen::inRange<std::uint32_t>(1, 9);
    p.workers_per_gpu = *rc::gen::inRange<std::uint32_t>(1, 4);
    p.retry_limit = *rc::gen::inRange<std::uint32_t>(0, 4);
    settings.synthesis_threads = *rc::gen::inRange<std::uint32_t>(1, 17);
    // Listed per-GPU first: the draws of seed 6 then leave the teeth test its shrunk per-host case.
    p.pool_layout = *rc::gen::element(policy::PoolLayout::per_gpu, policy::PoolLayout::per_host);
    return settings;
  });
}

// Fault-free events weigh more than faults, so that most runs get far into the job.
inline rc::Gen<EventKind> arbitrary_event_kind() {
  return rc::gen::weightedElement<EventKind>({
      {8, EventKind::start_synthesis},
      {8, EventKind::finish_synthesis},
      {8, EventKind::assign_gpu_work},
      {8, EventKind::finish_copy},
      {8, EventKind::begin_compute},
      {8, EventKind::finish_compute},
      {3, EventKind::watchdog_fires},
      {2, EventKind::gpu_error},
      {1, EventKind::pinned_allocation_failure},
      {2, EventKind::slow_transfer},
      {1, EventKind::stalled_transfer},
      {1, EventKind::worker_dies},
  });
}

// One rc::state command: an event of the pipeline (or a fault) on the target `pick` selects.
// The model state is the settings: which events can happen is decided by the harness at run
// time, so every command applies in every state and shrinking may drop any of them.
template <typename Policy>
struct PipelineEvent : rc::state::Command<HarnessSettings, PolicyHarness<Policy>> {
  PipelineEvent(EventKind event_kind, std::uint32_t event_pick) : kind(event_kind), pick(event_pick) {}
  EventKind kind;
  std::uint32_t pick;

  void run(const HarnessSettings&, PolicyHarness<Policy>& harness) const override { harness.apply(kind, pick); }
  void show(std::ostream& os) const override { os << event_name(kind) << "(" << pick << ")"; }
};

template <typename Policy>
rc::Gen<std::shared_ptr<const rc::state::Command<HarnessSettings, PolicyHarness<Policy>>>> arbitrary_event(
    const HarnessSettings&) {
  using Event = rc::state::Command<HarnessSettings, PolicyHarness<Policy>>;
  return rc::gen::map(rc::gen::pair(arbitrary_event_kind(), rc::gen::inRange<std::uint32_t>(0, 64)),
                      [](const std::pair<EventKind, std::uint32_t>& event) -> std::shared_ptr<const Event> {
                        return std::make_shared<const PipelineEvent<Policy>>(event.first, event.second);
                      });
}

}  // namespace zkpipe::properties
