// Tests of faults::FaultInjector: decisions replay from the seed whatever order they are asked
// in, follow their probabilities, are counted, and bad options are refused by name.
#include <gtest/gtest.h>

#include "faults/fault_injector.hpp"

namespace zkpipe::faults {
namespace {

FaultOptions some_faults(std::uint64_t seed) {
  FaultOptions options;
  options.seed = seed;
  options.gpu_error_probability = 0.3;
  options.slow_transfer_probability = 0.2;
  options.stalled_transfer_probability = 0.1;
  options.worker_death_probability = 0.05;
  options.wrong_result_probability = 0.15;
  options.device_allocation_failure_probability = 0.25;
  options.device_reset_probability = 0.08;
  return options;
}

TEST(FaultInjector, TheSameSeedReplaysTheSameFaultsInAnyOrder) {
  FaultInjector forward(some_faults(42)), backward(some_faults(42));
  std::vector<bool> asked_forward, asked_backward;
  for (std::uint32_t partition = 0; partition < 200; ++partition) asked_forward.push_back(forward.gpu_error(partition, 1));
  for (std::uint32_t partition = 200; partition-- > 0;) asked_backward.insert(asked_backward.begin(), backward.gpu_error(partition, 1));
  EXPECT_EQ(asked_forward, asked_backward);
  EXPECT_EQ(forward.injected(), backward.injected());
}

TEST(FaultInjector, DifferentSeedsKeysAndSitesDrawDifferently) {
  FaultInjector one(some_faults(1)), other(some_faults(2));
  std::uint32_t differ = 0, across_attempts = 0;
  for (std::uint32_t partition = 0; partition < 500; ++partition) {
    differ += one.gpu_error(partition, 0) != other.gpu_error(partition, 0);
    across_attempts += one.gpu_error(partition, 0) != one.gpu_error(partition, 1);
  }
  EXPECT_GT(differ, 100u);
  EXPECT_GT(across_attempts, 100u);
}

TEST(FaultInjector, FaultsFollowTheirProbabilities) {
  FaultInjector injector(some_faults(7));
  constexpr std::uint32_t draws = 20000;
  for (std::uint32_t partition = 0; partition < draws; ++partition) {
    injector.gpu_error(partition, 0);
    injector.transfer_fault(partition, 0);
    injector.worker_dies(partition % 8, partition, 0);
    injector.wrong_result(partition, 0);
    injector.device_allocation_fails(partition, 0);
    injector.device_resets(partition % 8, partition, 0);
  }
  const FaultCounts counts = injector.injected();
  EXPECT_NEAR(double(counts.gpu_errors) / draws, 0.3, 0.02);
  EXPECT_NEAR(double(counts.slow_transfers) / draws, 0.2, 0.02);
  EXPECT_NEAR(double(counts.stalled_transfers) / draws, 0.1, 0.015);
  EXPECT_NEAR(double(counts.worker_deaths) / draws, 0.05, 0.01);
  EXPECT_NEAR(double(counts.wrong_results) / draws, 0.15, 0.015);
  EXPECT_NEAR(double(counts.device_allocation_failures) / draws, 0.25, 0.02);
  EXPECT_NEAR(double(counts.device_resets) / draws, 0.08, 0.012);
  EXPECT_EQ(counts.total(), counts.gpu_errors + counts.slow_transfers + counts.stalled_transfers + counts.worker_deaths +
                                counts.wrong_results + counts.device_allocation_failures + counts.device_resets);
}

// A wrong result is its own site: it draws independently of the GPU error of the same attempt.
TEST(FaultInjector, WrongResultsAreTheirOwnSite) {
  FaultOptions options;
  options.seed = 5;
  options.gpu_error_probability = 0.5;
  options.wrong_result_probability = 0.5;
  FaultInjector injector(options);
  std::uint32_t differ = 0;
  for (std::uint32_t partition = 0; partition < 400; ++partition)
    differ += injector.gpu_error(partition, 0) != injector.wrong_result(partition, 0);
  EXPECT_GT(differ, 120u);
  options.wrong_result_probability = -0.1;
  EXPECT_THROW(FaultInjector{options}, std::invalid_argument);
}

// The CUDA-only sites draw independently of the sites that share their keys: a device reset of
// the death's (worker, partition, attempt), an allocation failure of the GPU error's attempt.
TEST(FaultInjector, DeviceResetsAndAllocationFailuresAreTheirOwnSites) {
  FaultOptions options;
  options.seed = 6;
  options.gpu_error_probability = options.worker_death_probability = 0.5;
  options.device_allocation_failure_probability = options.device_reset_probability = 0.5;
  FaultInjector injector(options);
  std::uint32_t resets_differ = 0, allocations_differ = 0;
  for (std::uint32_t partition = 0; partition < 400; ++partition) {
    resets_differ += injector.worker_dies(partition % 4, partition, 0) != injector.device_resets(partition % 4, partition, 0);
    allocations_differ += injector.gpu_error(partition, 0) != injector.device_allocation_fails(partition, 0);
  }
  EXPECT_GT(resets_differ, 120u);
  EXPECT_GT(allocations_differ, 120u);
  options.device_reset_probability = 1.5;
  EXPECT_THROW(FaultInjector{options}, std::invalid_argument);
  options.device_reset_probability = 0;
  options.device_allocation_failure_probability = -1;
  EXPECT_THROW(FaultInjector{options}, std::invalid_argument);
}

TEST(FaultInjector, NoFaultsAtProbabilityZeroAndAlwaysAtOne) {
  FaultOptions never;
  FaultOptions always;
  always.gpu_error_probability = 1;
  always.pinned_allocation_failure_probability = 1;
  FaultInjector quiet(never), loud(always);
  for (std::uint32_t partition = 0; partition < 100; ++partition) {
    EXPECT_FALSE(quiet.gpu_error(partition, 0));
    EXPECT_EQ(quiet.transfer_fault(partition, 0), TransferFault::none);
    EXPECT_TRUE(loud.gpu_error(partition, 0));
  }
  EXPECT_FALSE(quiet.pinned_allocation_fails());
  EXPECT_TRUE(loud.pinned_allocation_fails());
}

TEST(FaultInjector, CountsRoundTripThroughText) {
  const FaultCounts counts{3, 1, 4, 1, 5, 9, 2, 6};
  EXPECT_EQ(parse_fault_counts(format_fault_counts(counts)), counts);
  EXPECT_THROW(parse_fault_counts("gpu_errors three"), std::invalid_argument);
  EXPECT_THROW(parse_fault_counts(format_fault_counts(counts) + " extra 1"), std::invalid_argument);
}

TEST(FaultInjector, RefusesOptionsThatAreNotProbabilities) {
  FaultOptions options;
  options.gpu_error_probability = 1.5;
  EXPECT_THROW(FaultInjector{options}, std::invalid_argument);
  options = {};
  options.slow_transfer_probability = 0.7;
  options.stalled_transfer_probability = 0.4;
  EXPECT_THROW(FaultInjector{options}, std::invalid_argument);
  options = {};
  options.slow_transfer_factor = 0.5;
  EXPECT_THROW(FaultInjector{options}, std::invalid_argument);
}

}  // namespace
}  // namespace zkpipe::faults
