#include "fault_injector.hpp"

#include <atomic>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "util/splitmix64.hpp"

namespace zkpipe::faults {

namespace {

// The decision, counted where it is a fault.
bool counted(bool fault, std::atomic<std::uint64_t>& count) {
  if (fault) ++count;
  return fault;
}

}  // namespace

void validate(const FaultOptions& options) {
  auto require_probability = [](double value, const char* name) {
    if (!(value >= 0 && value <= 1)) throw std::invalid_argument(fmt::format("faults: {} must be within [0, 1]", name));
  };
  require_probability(options.gpu_error_probability, "gpu_error_probability");
  require_probability(options.pinned_allocation_failure_probability, "pinned_allocation_failure_probability");
  require_probability(options.slow_transfer_probability, "slow_transfer_probability");
  require_probability(options.stalled_transfer_probability, "stalled_transfer_probability");
  require_probability(options.worker_death_probability, "worker_death_probability");
  require_probability(options.wrong_result_probability, "wrong_result_probability");
  require_probability(options.device_allocation_failure_probability, "device_allocation_failure_probability");
  require_probability(options.device_reset_probability, "device_reset_probability");
  if (options.slow_transfer_probability + options.stalled_transfer_probability > 1)
    throw std::invalid_argument("faults: slow_transfer_probability + stalled_transfer_probability must be <= 1");
  if (!(options.slow_transfer_factor >= 1)) throw std::invalid_argument("faults: slow_transfer_factor must be >= 1");
  if (!(options.stalled_transfer_s >= 0)) throw std::invalid_argument("faults: stalled_transfer_s must be >= 0");
}

std::uint64_t FaultCounts::total() const {
  return gpu_errors + pinned_allocation_failures + slow_transfers + stalled_transfers + worker_deaths + wrong_results +
         device_allocation_failures + device_resets;
}

FaultCounts& FaultCounts::operator+=(const FaultCounts& other) {
  gpu_errors += other.gpu_errors;
  pinned_allocation_failures += other.pinned_allocation_failures;
  slow_transfers += other.slow_transfers;
  stalled_transfers += other.stalled_transfers;
  worker_deaths += other.worker_deaths;
  wrong_results += other.wrong_results;
  device_allocation_failures += other.device_allocation_failures;
  device_resets += other.device_resets;
  return *this;
}

std::string format_fault_counts(const FaultCounts& counts) {
  return fmt::format(
      "gpu_errors {} pinned_allocation_failures {} slow_transfers {} stalled_transfers {} worker_deaths {} "
      "wrong_results {} device_allocation_failures {} device_resets {}",
      counts.gpu_errors, counts.pinned_allocation_failures, counts.slow_transfers, counts.stalled_transfers,
      counts.worker_deaths, counts.wrong_results, counts.device_allocation_failures, counts.device_resets);
}

FaultCounts parse_fault_counts(const std::string& text) {
  FaultCounts counts;
  std::istringstream in(text);
  std::string gpu, pinned, slow, stalled, deaths, wrong, allocation, reset, rest;
  in >> gpu >> counts.gpu_errors >> pinned >> counts.pinned_allocation_failures >> slow >> counts.slow_transfers >>
      stalled >> counts.stalled_transfers >> deaths >> counts.worker_deaths >> wrong >> counts.wrong_results >>
      allocation >> counts.device_allocation_failures >> reset >> counts.device_resets;
  if (!in || gpu != "gpu_errors" || pinned != "pinned_allocation_failures" || slow != "slow_transfers" ||
      stalled != "stalled_transfers" || deaths != "worker_deaths" || wrong != "wrong_results" ||
      allocation != "device_allocation_failures" || reset != "device_resets" || in >> rest)
    throw std::invalid_argument(fmt::format("not fault counts: '{}'", text));
  return counts;
}

FaultInjector::FaultInjector(const FaultOptions& options) : options_(options) { validate(options_); }

double FaultInjector::draw(Site site, std::uint64_t first, std::uint64_t second, std::uint64_t third) const {
  return zk::keyed_draw(zk::splitmix64(options_.seed ^ zk::splitmix64(site)), {first, second, third});
}

bool FaultInjector::pinned_allocation_fails() {
  return counted(draw(pinned_allocation_site, 0, 0, 0) < options_.pinned_allocation_failure_probability,
                 pinned_allocation_failures_);
}

TransferFault FaultInjector::transfer_fault(policy::PartitionId partition, std::uint32_t attempt) {
  const double u = draw(transfer_site, partition, attempt, 0);
  if (u < options_.stalled_transfer_probability) {
    ++stalled_transfers_;
    return TransferFault::stalled;
  }
  if (u < options_.stalled_transfer_probability + options_.slow_transfer_probability) {
    ++slow_transfers_;
    return TransferFault::slow;
  }
  return TransferFault::none;
}

bool FaultInjector::gpu_error(policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(gpu_error_site, partition, attempt, 0) < options_.gpu_error_probability, gpu_errors_);
}

bool FaultInjector::worker_dies(policy::WorkerId worker, policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(worker_death_site, worker, partition, attempt) < options_.worker_death_probability, worker_deaths_);
}

bool FaultInjector::wrong_result(policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(wrong_result_site, partition, attempt, 0) < options_.wrong_result_probability, wrong_results_);
}

bool FaultInjector::device_allocation_fails(policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(device_allocation_site, partition, attempt, 0) < options_.device_allocation_failure_probability,
                 device_allocation_failures_);
}

bool FaultInjector::device_resets(policy::WorkerId worker, policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(device_reset_site, worker, partition, attempt) < options_.device_reset_probability, device_resets_);
}

FaultCounts FaultInjector::injected() const {
  return {gpu_errors_.load(),    pinned_allocation_failures_.load(), slow_transfers_.load(),
          stalled_transfers_.load(), worker_deaths_.load(), wrong_results_.load(),
          device_allocation_failures_.load(), device_resets_.load()};
}

}  // namespace zkpipe::faults
