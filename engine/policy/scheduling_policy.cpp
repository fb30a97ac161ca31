#include "scheduling_policy.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

namespace zkpipe::policy {

void validate(const PolicySettings& settings) {
  auto require = [](bool ok, const char* message) {
    if (!ok) throw std::invalid_argument(message);
  };
  require(settings.partitions >= 1, "partitions must be >= 1");
  require(settings.partition_host_bytes <= settings.host_budget_bytes,
          "host budget is smaller than one partition's a/b/c bytes: raise the budget");
  require(settings.partitions_in_flight_max >= 1, "partitions_in_flight must be >= 1");
  require(settings.staging == Staging::pageable || settings.pool_slabs >= 1,
          "pinned staging needs pool_slabs >= 1");
  require(settings.gpus >= 1, "gpus must be >= 1");
  require(settings.workers_per_gpu >= 1, "workers_per_gpu must be >= 1");
}

SchedulingPolicy::SchedulingPolicy(const PolicySettings& settings)
    : settings_(settings), staging_(settings.staging) {
  validate(settings_);
  partitions_.resize(settings_.partitions);
  for (PartitionId id = 0; id < settings_.partitions; ++id) pending_.push_back(id);
  free_slabs_.resize(settings_.pools());
  for (std::uint32_t pool = 0; pool < settings_.pools(); ++pool) {
    const SlabId first = pool * settings_.pool_slabs;
    for (SlabId slab = first + settings_.pool_slabs; slab > first; --slab)
      free_slabs_[pool].push_back(slab - 1);
  }
  worker_dead_.assign(settings_.gpus * settings_.workers_per_gpu, false);
  worker_waiting_.assign(worker_dead_.size(), false);
  bound_attempts_.assign(settings_.gpus, 0);
  running_on_gpu_.assign(settings_.gpus, 0);
}

SchedulingPolicy::Partition& SchedulingPolicy::partition_in(PartitionId partition, std::string_view event,
                                                            std::initializer_list<State> states, std::string_view otherwise) {
  if (partition >= partitions_.size())
    throw std::logic_error(fmt::format("policy: {} for unknown partition {}", event, partition));
  if (std::ranges::find(states, partitions_[partition].state) == states.end())
    throw std::logic_error(fmt::format("policy: {} for a partition {}", event, otherwise));
  return partitions_[partition];
}

std::uint32_t SchedulingPolicy::workers_alive() const {
  return static_cast<std::uint32_t>(std::count(worker_dead_.begin(), worker_dead_.end(), false));
}

std::uint32_t SchedulingPolicy::in_flight() const { return admitted_not_copied_; }

bool SchedulingPolicy::gpu_alive(std::uint32_t gpu) const {
  const auto first = worker_dead_.begin() + std::ptrdiff_t(gpu * settings_.workers_per_gpu);
  const auto last = first + settings_.workers_per_gpu;
  return std::find(first, last, false) != last;
}

std::optional<std::uint32_t> SchedulingPolicy::pool_to_lease() const {
  if (settings_.pool_layout == PoolLayout::per_host)
    return free_slabs_.front().empty() ? std::nullopt : std::make_optional(0u);
  std::optional<std::uint32_t> best;
  for (std::uint32_t gpu = 0; gpu < settings_.gpus; ++gpu) {
    const bool fewer_bound = !best || bound_attempts_[gpu] < bound_attempts_[*best];
    if (!free_slabs_[gpu].empty() && gpu_alive(gpu) && fewer_bound) best = gpu;
  }
  return best;
}

bool SchedulingPolicy::may_run(const Partition& partition, WorkerId worker) const {
  return !partition.backing.gpu || *partition.backing.gpu == gpu_of(worker);
}

SynthesisDecision SchedulingPolicy::request_synthesis() {
  if (finished()) return WaitReason::job_finished;
  if (pending_.empty()) return WaitReason::no_work_yet;
  if (in_flight() >= settings_.partitions_in_flight_max) return WaitReason::in_flight_limit;
  if (counters_.reserved_bytes + settings_.partition_host_bytes > settings_.host_budget_bytes)
    return WaitReason::budget;
  std::optional<std::uint32_t> pool;
  if (staging_ == Staging::pinned && !(pool = pool_to_lease())) return WaitReason::pool;

  const PartitionId id = pending_.front();
  pending_.pop_front();
  Partition& partition = partitions_[id];
  partition.state = State::synthesizing;
  partition.holds_reservation = true;
  counters_.reserved_bytes += settings_.partition_host_bytes;
  counters_.reserved_bytes_max = std::max(counters_.reserved_bytes_max, counters_.reserved_bytes);
  partition.backing = Backing{staging_, std::nullopt, std::nullopt};
  if (pool) {
    partition.backing.slab = free_slabs_[*pool].back();
    free_slabs_[*pool].pop_back();
    if (settings_.pool_layout == PoolLayout::per_gpu) {
      partition.backing.gpu = *pool;
      ++bound_attempts_[*pool];
    }
    ++counters_.slabs_leased;
  }
  ++admitted_not_copied_;
  return SynthesisGrant{id, partition.attempt, partition.backing};
}

void SchedulingPolicy::synthesis_finished(PartitionId id) {
  Partition& partition = partition_in(id, "synthesis_finished", {State::synthesizing}, "not synthesizing");
  if (workers_alive() == 0) {
    end_attempt(partition);
    return fail(partition);
  }
  if (partition.backing.gpu && !gpu_alive(*partition.backing.gpu))
    return requeue_or_fail(id, false);  // its GPU lost every worker: synthesized again for another
  partition.state = State::ready;
  ready_.push_back(id);
}

std::optional<GpuAssignment> SchedulingPolicy::request_gpu_work(WorkerId worker) {
  if (worker >= worker_dead_.size() || worker_dead_[worker]) return std::nullopt;
  auto runnable_here = [&](PartitionId id) { return may_run(partitions_[id], worker); };
  const auto next = std::ranges::find_if(ready_, runnable_here);
  if (next == ready_.end() || another_gpu_is_less_busy(partitions_[*next], worker)) {
    worker_waiting_[worker] = true;
    return std::nullopt;
  }
  const PartitionId id = *next;
  ready_.erase(next);
  Partition& partition = partitions_[id];
  partition.state = State::copying;
  partition.worker = worker;
  worker_waiting_[worker] = false;
  ++running_on_gpu_[gpu_of(worker)];
  return GpuAssignment{id, partition.attempt, partition.backing};
}

bool SchedulingPolicy::another_gpu_is_less_busy(const Partition& partition, WorkerId worker) const {
  for (WorkerId other = 0; other < worker_waiting_.size(); ++other)
    if (worker_waiting_[other] && !worker_dead_[other] && may_run(partition, other) &&
        running_on_gpu_[gpu_of(other)] < running_on_gpu_[gpu_of(worker)])
      return true;
  return false;
}

void SchedulingPolicy::end_attempt(Partition& partition) {
  release_holdings(partition);
  if (partition.worker) --running_on_gpu_[gpu_of(*partition.worker)];
  partition.worker.reset();
  if (partition.backing.gpu) --bound_attempts_[*partition.backing.gpu];
  partition.backing.gpu.reset();
}

void SchedulingPolicy::fail(Partition& partition) {
  partition.state = State::failed;
  ++counters_.failed;
}

void SchedulingPolicy::release_holdings(Partition& partition) {
  if (partition.holds_reservation) {
    counters_.reserved_bytes -= settings_.partition_host_bytes;
    partition.holds_reservation = false;
    --admitted_not_copied_;
  }
  if (partition.backing.slab) {
    --counters_.slabs_leased;
    const SlabId slab = *partition.backing.slab;
    if (staging_ == Staging::pinned) free_slabs_[settings_.pool_of_slab(slab)].push_back(slab);
    partition.backing.slab.reset();
  }
}

void SchedulingPolicy::copy_finished(PartitionId id) {
  Partition& partition = partition_in(id, "copy_finished", {State::copying}, "not copying");
  release_holdings(partition);
  partition.state = State::computing;
}

void SchedulingPolicy::attempt_succeeded(PartitionId id) {
  Partition& partition = partition_in(id, "attempt_succeeded", {State::computing}, "whose copy has not finished");
  end_attempt(partition);
  partition.state = State::proved;
  ++counters_.proved;
}

void SchedulingPolicy::requeue_or_fail(PartitionId id, bool counts_as_failure) {
  Partition& partition = partitions_[id];
  end_attempt(partition);
  if (counts_as_failure) {
    ++counters_.failed_attempts;
    ++partition.attempt;
  }
  if (partition.attempt > settings_.retry_limit || workers_alive() == 0) return fail(partition);
  partition.state = State::pending;
  pending_.push_front(id);
}

void SchedulingPolicy::attempt_failed(PartitionId id) {
  partition_in(id, "attempt_failed", {State::synthesizing, State::copying, State::computing}, "with no attempt running");
  requeue_or_fail(id, true);
}

void SchedulingPolicy::worker_died(WorkerId worker) {
  if (worker >= worker_dead_.size() || worker_dead_[worker]) return;
  worker_dead_[worker] = true;
  ++counters_.workers_dead;
  for (PartitionId id = 0; id < partitions_.size(); ++id) {
    const Partition& partition = partitions_[id];
    const bool on_that_worker = partition.worker == worker &&
                                (partition.state == State::copying ||
                                 partition.state == State::computing);
    if (on_that_worker) requeue_or_fail(id, false);
  }
  requeue_ready_bound_to(worker / settings_.workers_per_gpu);
  fail_remaining_when_no_worker_is_alive();
}

void SchedulingPolicy::requeue_ready_bound_to(std::uint32_t gpu) {
  if (gpu_alive(gpu)) return;
  auto bound_there = [&](PartitionId id) { return partitions_[id].backing.gpu == gpu; };
  std::vector<PartitionId> stranded;
  std::ranges::copy_if(ready_, std::back_inserter(stranded), bound_there);
  std::erase_if(ready_, bound_there);
  // Requeued at the front in their queue order: the first ready is the first synthesized again.
  for (auto id = stranded.rbegin(); id != stranded.rend(); ++id) requeue_or_fail(*id, false);
}

void SchedulingPolicy::fail_remaining_when_no_worker_is_alive() {
  if (workers_alive() > 0) return;
  for (PartitionId id : pending_) fail(partitions_[id]);
  pending_.clear();
  for (PartitionId id : ready_) {
    end_attempt(partitions_[id]);
    fail(partitions_[id]);
  }
  ready_.clear();
}

void SchedulingPolicy::pinned_allocation_failed() {
  staging_ = Staging::pageable;
  for (std::vector<SlabId>& pool : free_slabs_) pool.clear();
}

bool SchedulingPolicy::finished() const {
  return counters_.proved + counters_.failed == settings_.partitions;
}

bool SchedulingPolicy::worker_alive(WorkerId worker) const {
  return worker < worker_dead_.size() && !worker_dead_[worker];
}

bool SchedulingPolicy::waiting_for_gpu(PartitionId id) const {
  return id < partitions_.size() && partitions_[id].state == State::ready;
}

PartitionOutcome SchedulingPolicy::outcome(PartitionId id) const {
  if (id >= partitions_.size()) throw std::logic_error("policy: outcome of unknown partition");
  switch (partitions_[id].state) {
    case State::proved: return PartitionOutcome::proved;
    case State::failed: return PartitionOutcome::failed;
    default: return PartitionOutcome::pending;
  }
}

std::vector<std::pair<PartitionId, SlabId>> SchedulingPolicy::slab_leases() const {
  std::vector<std::pair<PartitionId, SlabId>> leases;
  for (PartitionId id = 0; id < partitions_.size(); ++id)
    if (partitions_[id].backing.slab) leases.emplace_back(id, *partitions_[id].backing.slab);
  return leases;
}

}  // namespace zkpipe::policy
