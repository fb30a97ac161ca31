// Contract: FaultInjector is zkpipe's one seeded source of injected faults, shared by the SimGrid
// model (model/simulation.cpp), the engine's fake device backend (engine/pipeline/
// fake_backend.hpp) and its fault-injecting CUDA backend (engine/pipeline/faulty_cuda_backend.hpp);
// the property tests drive the policy's fault events directly. Every decision
// is a pure function of (seed, fault site, partition, attempt, worker): the same seed replays the
// same faults whatever order threads or actors ask in, so a failure found with a seed is replayed
// by that seed. Decisions are thread-safe; counts are atomic. Each decision is counted each time
// it is asked and comes out a fault, so callers ask each site once per attempt.
//
// Faults injected, and why each is recoverable (the engine's fake device form in brackets; the
// CUDA form is in faulty_cuda_backend.hpp):
// - gpu_error: an attempt's GPU work fails (kernel fault, ECC error). The policy's
//   attempt_failed returns what the partition held and requeues it until its retry_limit, then
//   reports it failed: the job ends, the partition is not lost. [a kernel call throws]
// - wrong_result: an attempt's GPU work returns a wrong point (silent corruption). The engine
//   verifies every proof before handing it out, so the proof is not written and the attempt is
//   retried like a GPU error. The model has no proof to corrupt and does not ask this site.
//   [the attempt's first G1 MSM or batch addition is off by the generator]
// - pinned_allocation_failure: the pinned slab pool cannot be allocated at start
//   (cudaHostAlloc fails). pinned_allocation_failed switches staging to pageable: copies are
//   slower but every partition still flows. [the pool's pinning is refused]
// - slow_transfer: one host-to-device copy runs slow_transfer_factor times slower (contention,
//   a PCIe link retrained to a lower speed). Only time is lost. [the copy delay, stretched]
// - stalled_transfer: one host-to-device copy makes no progress; the worker's watchdog gives up
//   after stalled_transfer_s and reports attempt_failed, which is then retried like a GPU error.
//   [the copy throws after stalled_transfer_s: a copy error when that is 0]
// - worker_death: a GPU worker dies during a copy (its thread or device context is lost). The
//   policy never hands it work again and requeues its attempt without charging a retry; when
//   the last worker dies every remaining partition is reported failed (never lost). [the device
//   is lost at the end of the copy: that call and every later one throw]
// - device_allocation_failure: an attempt's device allocation is refused (cudaMalloc out of
//   memory, another process holding the GPU's memory). Retried like a GPU error. Engine only,
//   CUDA backend only (the fake device allocates nothing).
// - device_reset: a worker's device is reset under it (everything it held on the GPU is gone).
//   Handled as worker_death: the worker is retired, its attempt requeued uncharged. Engine only,
//   CUDA backend only; keyed by (worker, partition, attempt) like worker_death.
//
// Which worker takes which attempt depends on timing in the engine, so worker_death and
// device_reset replay per (worker, partition, attempt); every other site is keyed by (partition, attempt) alone, and
// without worker deaths a seed replays the same faults and the same partition outcomes.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "policy/scheduling_policy.hpp"

namespace zkpipe::faults {

struct FaultOptions {
  std::uint64_t seed = 1;
  double gpu_error_probability = 0;                  // per attempt, decided after its GPU work
  double pinned_allocation_failure_probability = 0;  // once, when the pool is allocated
  double slow_transfer_probability = 0;              // per attempt's host-to-device copy
  double slow_transfer_factor = 4;                   // >= 1: a slow copy takes this much longer
  double stalled_transfer_probability = 0;           // per attempt's copy; slow + stalled <= 1
  double stalled_transfer_s = 1;                     // how long a stalled copy hangs
  double worker_death_probability = 0;               // per (worker, partition, attempt)
  double wrong_result_probability = 0;               // per attempt, engine only (see above)
  double device_allocation_failure_probability = 0;  // per attempt, CUDA engine only
  double device_reset_probability = 0;               // per (worker, partition, attempt), CUDA engine only
};

// Calls visit(name, option) for every option, named as the struct names it.
template <typename Options, typename Visit>  // Options: FaultOptions, const or not
void for_each_option(Options& o, Visit visit) {
  visit("seed", o.seed), visit("gpu_error_probability", o.gpu_error_probability);
  visit("pinned_allocation_failure_probability", o.pinned_allocation_failure_probability);
  visit("slow_transfer_probability", o.slow_transfer_probability), visit("slow_transfer_factor", o.slow_transfer_factor);
  visit("stalled_transfer_probability", o.stalled_transfer_probability), visit("stalled_transfer_s", o.stalled_transfer_s);
  visit("worker_death_probability", o.worker_death_probability);
  visit("wrong_result_probability", o.wrong_result_probability);
  visit("device_allocation_failure_probability", o.device_allocation_failure_probability);
  visit("device_reset_probability", o.device_reset_probability);
}

// Throws std::invalid_argument naming the option when a probability is outside [0, 1], the
// transfer probabilities sum above 1, the slow factor is below 1 or the stall time negative.
void validate(const FaultOptions& options);

enum class TransferFault { none, slow, stalled };

struct FaultCounts {
  std::uint64_t gpu_errors = 0;
  std::uint64_t pinned_allocation_failures = 0;
  std::uint64_t slow_transfers = 0;
  std::uint64_t stalled_transfers = 0;
  std::uint64_t worker_deaths = 0;
  std::uint64_t wrong_results = 0;
  std::uint64_t device_allocation_failures = 0;
  std::uint64_t device_resets = 0;

  std::uint64_t total() const;
  FaultCounts& operator+=(const FaultCounts& other);
  bool operator==(const FaultCounts&) const = default;
};
// "gpu_errors 2 pinned_allocation_failures 0 slow_transfers 1 stalled_transfers 0 worker_deaths 1
// wrong_results 0 device_allocation_failures 0 device_resets 0" (one line)
std::string format_fault_counts(const FaultCounts& counts);
// The inverse of format_fault_counts; throws std::invalid_argument on other text.
FaultCounts parse_fault_counts(const std::string& text);

class FaultInjector {
 public:
  explicit FaultInjector(const FaultOptions& options);
  FaultInjector(const FaultInjector&) = delete;  // one per job: its counts are the job's
  FaultInjector& operator=(const FaultInjector&) = delete;

  bool pinned_allocation_fails();
  TransferFault transfer_fault(policy::PartitionId partition, std::uint32_t attempt);
  bool gpu_error(policy::PartitionId partition, std::uint32_t attempt);
  bool worker_dies(policy::WorkerId worker, policy::PartitionId partition, std::uint32_t attempt);
  bool wrong_result(policy::PartitionId partition, std::uint32_t attempt);
  bool device_allocation_fails(policy::PartitionId partition, std::uint32_t attempt);
  bool device_resets(policy::WorkerId worker, policy::PartitionId partition, std::uint32_t attempt);

  const FaultOptions& options() const { return options_; }
  FaultCounts injected() const;

 private:
  // Sites are numbered for good: a new one is appended, so that every seed replays what it did.
  enum Site : std::uint64_t {
    gpu_error_site = 1,
    pinned_allocation_site,
    transfer_site,
    worker_death_site,
    wrong_result_site,
    device_allocation_site,
    device_reset_site
  };
  // A uniform draw in [0, 1) that depends only on the seed, the site and the keys.
  double draw(Site site, std::uint64_t first, std::uint64_t second, std::uint64_t third) const;

  FaultOptions options_;
  mutable FaultCounts counts_;  // each count read and written through a std::atomic_ref
};

}  // namespace zkpipe::faults
