// The properties have teeth: a deliberately broken policy (LeakyLeasePolicy: a lease never
// returned when an attempt fails) is caught, and RapidCheck shrinks it to a small case.
#include <gtest/gtest.h>

#include "leaky_lease_policy.hpp"
#include "property_suite.hpp"

namespace zkpipe::properties {
namespace {

TEST(Teeth, ALeaseNeverReturnedOnAFailedAttemptIsCaughtAndShrunkToASmallCase) {
  const NamedProperty leaky{"Teeth/LeakyLeasePolicy", PropertyKind::policy,
                            [] { check_policy_property<LeakyLeasePolicy>(PolicyProperty::leases_within_pool); }};
  const PropertyRun run = run_property(leaky, /*seed=*/6, /*cases=*/2000);
  ASSERT_TRUE(run.failed) << "the leak went unnoticed in " << run.cases_passed << " cases";
  EXPECT_FALSE(run.reproduce.empty());
  std::cout << "caught after " << run.cases_passed << " passing cases; shrunk to:\n" << run.failure << "\n";
  const PolicyFailure& shrunk = last_policy_failure();
  // The smallest leak: synthesize one partition into a pinned slab, hand it to a worker, stall
  // its copy, let the watchdog fail it: five commands on the smallest settings.
  EXPECT_LE(shrunk.commands, 6u) << shrunk.detail;
  EXPECT_EQ(shrunk.settings.policy.partitions, 1u);
  EXPECT_EQ(shrunk.settings.policy.staging, policy::Staging::pinned);
  EXPECT_EQ(shrunk.settings.policy.pool_slabs, 1u);
  EXPECT_EQ(shrunk.settings.policy.gpus, 1u);
}

TEST(Teeth, TheRealPolicyPassesTheSameRuns) {
  const PropertyRun run = run_property(property_by_id("PolicyProperties/LeasesWithinPool"), /*seed=*/6, 2000);
  EXPECT_FALSE(run.failed) << run.failure;
  EXPECT_EQ(run.cases_passed, 2000);
}

}  // namespace
}  // namespace zkpipe::properties
