#include "fault_injector.hpp"

#include <array>
#include <atomic>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "util/splitmix64.hpp"

namespace zkpipe::faults {

namespace {

// The decision, counted where it is a fault.
bool counted(bool fault, std::uint64_t& count) {
  if (fault) std::atomic_ref(count).fetch_add(1);
  return fault;
}

}  // namespace

void validate(const FaultOptions& options) {
  for_each_option(options, [](std::string_view name, auto value) {  // every *_probability option in [0, 1]
    if (name.ends_with("_probability") && !(double(value) >= 0 && double(value) <= 1))
      throw std::invalid_argument(fmt::format("faults: {} must be within [0, 1]", name));
  });
  if (options.slow_transfer_probability + options.stalled_transfer_probability > 1)
    throw std::invalid_argument("faults: slow_transfer_probability + stalled_transfer_probability must be <= 1");
  if (!(options.slow_transfer_factor >= 1)) throw std::invalid_argument("faults: slow_transfer_factor must be >= 1");
  if (!(options.stalled_transfer_s >= 0)) throw std::invalid_argument("faults: stalled_transfer_s must be >= 0");
}

namespace {

// Each count by its name, in the order format_fault_counts writes them.
constexpr std::array<std::pair<std::string_view, std::uint64_t FaultCounts::*>, 8> count_fields{{
    {"gpu_errors", &FaultCounts::gpu_errors},
    {"pinned_allocation_failures", &FaultCounts::pinned_allocation_failures},
    {"slow_transfers", &FaultCounts::slow_transfers},
    {"stalled_transfers", &FaultCounts::stalled_transfers},
    {"worker_deaths", &FaultCounts::worker_deaths},
    {"wrong_results", &FaultCounts::wrong_results},
    {"device_allocation_failures", &FaultCounts::device_allocation_failures},
    {"device_resets", &FaultCounts::device_resets},
}};

}  // namespace

std::uint64_t FaultCounts::total() const {
  std::uint64_t sum = 0;
  for (const auto& [name, count] : count_fields) sum += this->*count;
  return sum;
}

FaultCounts& FaultCounts::operator+=(const FaultCounts& other) {
  for (const auto& [name, count] : count_fields) this->*count += other.*count;
  return *this;
}

std::string format_fault_counts(const FaultCounts& counts) {
  std::string text;
  for (const auto& [name, count] : count_fields) text += fmt::format("{}{} {}", text.empty() ? "" : " ", name, counts.*count);
  return text;
}

FaultCounts parse_fault_counts(const std::string& text) {
  FaultCounts counts;
  std::istringstream in(text);
  std::string name, rest;
  bool read = true;
  for (const auto& [expected, count] : count_fields) read = read && (in >> name >> counts.*count) && name == expected;
  if (!read || in >> rest) throw std::invalid_argument(fmt::format("not fault counts: '{}'", text));
  return counts;
}

FaultInjector::FaultInjector(const FaultOptions& options) : options_(options) { validate(options_); }

double FaultInjector::draw(Site site, std::uint64_t first, std::uint64_t second, std::uint64_t third) const {
  return zk::keyed_draw(zk::splitmix64(options_.seed ^ zk::splitmix64(site)), {first, second, third});
}

bool FaultInjector::pinned_allocation_fails() {
  return counted(draw(pinned_allocation_site, 0, 0, 0) < options_.pinned_allocation_failure_probability,
                 counts_.pinned_allocation_failures);
}

TransferFault FaultInjector::transfer_fault(policy::PartitionId partition, std::uint32_t attempt) {
  const double u = draw(transfer_site, partition, attempt, 0);
  if (counted(u < options_.stalled_transfer_probability, counts_.stalled_transfers)) return TransferFault::stalled;
  if (counted(u < options_.stalled_transfer_probability + options_.slow_transfer_probability, counts_.slow_transfers))
    return TransferFault::slow;
  return TransferFault::none;
}

bool FaultInjector::gpu_error(policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(gpu_error_site, partition, attempt, 0) < options_.gpu_error_probability, counts_.gpu_errors);
}

bool FaultInjector::worker_dies(policy::WorkerId worker, policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(worker_death_site, worker, partition, attempt) < options_.worker_death_probability,
                 counts_.worker_deaths);
}

bool FaultInjector::wrong_result(policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(wrong_result_site, partition, attempt, 0) < options_.wrong_result_probability, counts_.wrong_results);
}

bool FaultInjector::device_allocation_fails(policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(device_allocation_site, partition, attempt, 0) < options_.device_allocation_failure_probability,
                 counts_.device_allocation_failures);
}

bool FaultInjector::device_resets(policy::WorkerId worker, policy::PartitionId partition, std::uint32_t attempt) {
  return counted(draw(device_reset_site, worker, partition, attempt) < options_.device_reset_probability,
                 counts_.device_resets);
}

FaultCounts FaultInjector::injected() const {
  FaultCounts counts;
  for (const auto& [name, count] : count_fields) counts.*count = std::atomic_ref(counts_.*count).load();
  return counts;
}

}  // namespace zkpipe::faults
