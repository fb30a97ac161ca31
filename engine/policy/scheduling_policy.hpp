// Contract: SchedulingPolicy is zkpipe's one scheduling policy, shared by the real engine, the
// SimGrid model and the property tests. It is a state machine with no clock, no threads and no
// I/O: callers report events (a synthesis finished, a copy finished, an attempt failed, a worker
// died) and ask for decisions (may a synthesis thread start a partition, and into which backing;
// which partition an idle GPU worker takes). Not thread-safe: the engine calls it under one mutex,
// the model from SimGrid actors (one OS thread), tests directly.
//
// Promises, checked by tests/policy:
// - admission is atomic: a partition is admitted only when its host bytes fit the budget, the
//   in-flight limit allows it and (pinned staging) a slab is free; nothing is held while waiting;
// - pinned leases never exceed pool_slabs per pool and no slab is held by two partitions;
// - with one pool per GPU, a partition's slab comes from the pool of the GPU it is bound to when
//   it is admitted, and only that GPU's workers are handed it; a partition bound to a GPU whose
//   workers have all died is released (slab and reservation returned) and requeued, without
//   counting against its retry limit, to be bound to a GPU with a live worker;
// - reserved host bytes never exceed host_budget_bytes;
// - every partition ends exactly once: proved, or reported failed after retry_limit failed
//   attempts, or failed because every GPU worker is dead;
// - a worker that died is never handed work again; its attempt is requeued without counting
//   against the partition's retry limit;
// - a failed pinned pool allocation switches staging to pageable for the rest of the job;
// - a ready partition goes to the least busy GPU: a worker that asks for it is handed nothing
//   while a waiting worker (one that asked and was handed nothing) that may run it sits on a GPU
//   running fewer attempts (copying or computing); callers wake a waiting worker of every GPU
//   when a partition is ready.
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "util/enum_names.hpp"

namespace zkpipe::policy {

enum class Staging { pinned, pageable };
inline constexpr zk::EnumNames<Staging, 2> staging_names{{{"pinned", Staging::pinned}, {"pageable", Staging::pageable}}};
inline std::string_view staging_name(Staging staging) { return zk::name_of(staging_names, staging); }
inline std::optional<Staging> parse_staging(std::string_view name) { return zk::value_of(staging_names, name); }

// How the pinned slabs are organised: one pool for the host, leased by every GPU's workers, or one
// pool per GPU (allocated near that GPU's PCIe root on a multi-GPU host), leased for that GPU only.
enum class PoolLayout { per_host, per_gpu };
inline constexpr zk::EnumNames<PoolLayout, 2> pool_layout_names{
    {{"per-host", PoolLayout::per_host}, {"per-gpu", PoolLayout::per_gpu}}};
inline std::string_view pool_layout_name(PoolLayout layout) { return zk::name_of(pool_layout_names, layout); }

using PartitionId = std::uint32_t;
using SlabId = std::uint32_t;
using WorkerId = std::uint32_t;  // gpu * workers_per_gpu + worker index on that gpu

struct PolicySettings {
  std::uint32_t partitions = 1;
  std::uint64_t partition_host_bytes = 0;  // a/b/c bytes one partition keeps in host memory
  std::uint64_t host_budget_bytes = 0;
  std::uint32_t partitions_in_flight_max = 1;  // admitted and not yet copied to the GPU
  Staging staging = Staging::pinned;
  std::uint32_t pool_slabs = 1;  // pinned slabs of each pool, each holds one partition's a/b/c
  PoolLayout pool_layout = PoolLayout::per_host;
  std::uint32_t gpus = 1;
  std::uint32_t workers_per_gpu = 1;
  std::uint32_t retry_limit = 2;  // failed attempts allowed before a partition is reported failed

  // Slabs are numbered across pools: pool p holds slabs p * pool_slabs .. (p + 1) * pool_slabs - 1,
  // and with one pool per GPU, pool p is GPU p's.
  std::uint32_t pools() const { return pool_layout == PoolLayout::per_gpu ? gpus : 1; }
  std::uint32_t pool_of_slab(SlabId slab) const { return slab / pool_slabs; }
};

// Throws std::invalid_argument naming the setting when the settings could never make progress
// (e.g. a budget smaller than one partition, zero slabs with pinned staging).
void validate(const PolicySettings& settings);

// Where one admitted partition's a/b/c live until the GPU has copied them.
struct Backing {
  Staging staging = Staging::pageable;
  std::optional<SlabId> slab;  // set for pinned staging
  // Set where the slab comes from a GPU's own pool: the one GPU whose workers may run the attempt.
  std::optional<std::uint32_t> gpu;
};

struct SynthesisGrant {
  PartitionId partition = 0;
  std::uint32_t attempt = 0;  // 0 for the first attempt
  Backing backing;
};

enum class WaitReason { budget, pool, in_flight_limit, no_work_yet, job_finished };

using SynthesisDecision = std::variant<SynthesisGrant, WaitReason>;

struct GpuAssignment {
  PartitionId partition = 0;
  std::uint32_t attempt = 0;
  Backing backing;
};

enum class PartitionOutcome { pending, proved, failed };

struct PolicyCounters {
  std::uint32_t proved = 0;
  std::uint32_t failed = 0;
  std::uint32_t failed_attempts = 0;
  std::uint32_t workers_dead = 0;
  std::uint32_t slabs_leased = 0;
  std::uint64_t reserved_bytes = 0;
  std::uint64_t reserved_bytes_max = 0;
};

class SchedulingPolicy {
 public:
  explicit SchedulingPolicy(const PolicySettings& settings);

  // A synthesis thread asks for a partition to synthesize. On a grant the budget reservation and
  // the backing are held until copy_finished or attempt_failed for that partition. With one pool
  // per GPU the grant binds the partition to the GPU with a live worker and a free slab that has
  // the fewest attempts bound to it (waiting for it or running there), the lowest-numbered on a
  // tie.
  SynthesisDecision request_synthesis();
  // The partition waits for a GPU worker (waiting_for_gpu) unless no worker is left to run it:
  // then its holdings are returned and it is requeued, or failed when no worker is alive at all.
  void synthesis_finished(PartitionId partition);

  // An idle worker asks for a synthesized partition it may run; nullopt: wait for the next event
  // (nothing it may run, or a waiting worker on a less busy GPU takes it).
  std::optional<GpuAssignment> request_gpu_work(WorkerId worker);
  // The a/b/c are on the device: the slab and the budget reservation are returned.
  void copy_finished(PartitionId partition);
  void attempt_succeeded(PartitionId partition);
  // A failed attempt (GPU error, failed copy, failed verification): retried while attempts
  // remain, else reported failed. Whatever the partition still held is returned.
  void attempt_failed(PartitionId partition);
  // Call once the dead worker can no longer touch the partition's buffers (its copy stopped):
  // the partition's slab and reservation are returned at once, and so are those of synthesized
  // partitions bound to a GPU left without a live worker (waiting_for_gpu turns false for them:
  // the caller frees their buffers).
  void worker_died(WorkerId worker);
  void pinned_allocation_failed();

  bool finished() const;
  bool worker_alive(WorkerId worker) const;
  // Synthesized and queued for a GPU worker (false once the policy took its holdings back).
  bool waiting_for_gpu(PartitionId partition) const;
  Staging staging() const { return staging_; }
  PartitionOutcome outcome(PartitionId partition) const;
  const PolicyCounters& counters() const { return counters_; }
  const PolicySettings& settings() const { return settings_; }
  // Slab leased by each partition that holds one, for invariant checks: (partition, slab).
  std::vector<std::pair<PartitionId, SlabId>> slab_leases() const;

 private:
  enum class State { pending, synthesizing, ready, copying, computing, proved, failed };
  struct Partition {
    State state = State::pending;
    std::uint32_t attempt = 0;
    bool holds_reservation = false;
    Backing backing;
    std::optional<WorkerId> worker;
  };

  // The partition, checked to be one of the job's and in one of `states` ("policy: <event> for a
  // partition <otherwise>" if not).
  Partition& partition_in(PartitionId partition, std::string_view event, std::initializer_list<State> states,
                          std::string_view otherwise);
  void release_holdings(Partition& partition);
  // The attempt ended: its holdings returned, its worker's GPU and its bound GPU one attempt less.
  void end_attempt(Partition& partition);
  void fail(Partition& partition);
  void requeue_or_fail(PartitionId id, bool counts_as_failure);
  void fail_remaining_when_no_worker_is_alive();
  void requeue_ready_bound_to(std::uint32_t gpu);
  std::optional<std::uint32_t> pool_to_lease() const;
  bool may_run(const Partition& partition, WorkerId worker) const;
  // Whether a waiting worker that may run `partition` has a GPU running fewer attempts than
  // `worker`'s: it takes the partition, not `worker`.
  bool another_gpu_is_less_busy(const Partition& partition, WorkerId worker) const;
  std::uint32_t gpu_of(WorkerId worker) const { return worker / settings_.workers_per_gpu; }
  bool gpu_alive(std::uint32_t gpu) const;
  std::uint32_t workers_alive() const;
  std::uint32_t in_flight() const;

  PolicySettings settings_;
  Staging staging_;
  std::vector<Partition> partitions_;
  std::deque<PartitionId> pending_;  // front first; retries go to the front
  std::deque<PartitionId> ready_;
  // Per pool, a stack: the most recently returned slab first.
  std::vector<std::vector<SlabId>> free_slabs_;
  std::vector<bool> worker_dead_;
  std::vector<std::uint32_t> bound_attempts_;  // per GPU: bound attempts not yet ended
  std::vector<bool> worker_waiting_;           // asked for GPU work and was handed none
  std::vector<std::uint32_t> running_on_gpu_;  // per GPU: attempts handed to its workers, not yet ended
  std::uint32_t admitted_not_copied_ = 0;
  PolicyCounters counters_;
};

}  // namespace zkpipe::policy
