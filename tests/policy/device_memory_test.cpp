// Tests of policy::plan_device_memory(): named cases at the sizes the H200 meets, then a RapidCheck
// property over random footprints and budgets that checks every promise of the contract.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "policy/device_memory.hpp"

namespace zkpipe::policy {
namespace {

constexpr std::uint64_t gib = 1ull << 30;

// Poseidon-merkle at 2^26 on the CUDA backend, roughly: the key's bases, the shared workspaces,
// a worker's quotient and witness buffers, two base chunks.
DeviceFootprint footprint_2_26() { return {37 * gib, 18 * gib, 9 * gib, gib / 2}; }

TEST(DeviceMemoryPlan, RunsWhatWasAskedWhenItFits) {
  const DevicePlan plan = plan_device_memory(footprint_2_26(), 127 * gib, 2, true);
  EXPECT_EQ(plan.workers_per_gpu, 2u);
  EXPECT_TRUE(plan.key_on_device);
  EXPECT_EQ(plan.bytes, 73 * gib);
  EXPECT_TRUE(plan.change.empty());
}

TEST(DeviceMemoryPlan, RunsFewerWorkersBeforeStreamingTheKey) {
  const DevicePlan plan = plan_device_memory(footprint_2_26(), 70 * gib, 2, true);
  EXPECT_EQ(plan.workers_per_gpu, 1u);
  EXPECT_TRUE(plan.key_on_device);
  EXPECT_NE(plan.change.find("1 of the 2 workers"), std::string::npos) << plan.change;
}

TEST(DeviceMemoryPlan, StreamsTheKeyWhenNoWorkerFitsBesideIt) {
  const DevicePlan plan = plan_device_memory(footprint_2_26(), 40 * gib, 2, true);
  EXPECT_FALSE(plan.key_on_device);
  EXPECT_EQ(plan.workers_per_gpu, 2u);
  EXPECT_NE(plan.change.find("stream from pinned host memory"), std::string::npos) << plan.change;
}

TEST(DeviceMemoryPlan, RefusesABudgetThatHoldsNoWorkerAndNamesTheSizes) {
  try {
    plan_device_memory(footprint_2_26(), 20 * gib, 1, true);
    FAIL() << "a 20 GiB budget cannot hold 18 GiB of workspaces and a 9.5 GiB worker";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("20.0 GiB"), std::string::npos) << message;
    EXPECT_NE(message.find("18.0 GiB"), std::string::npos) << message;
    EXPECT_NE(message.find("9.5 GiB"), std::string::npos) << message;
  }
}

RC_GTEST_PROP(DeviceMemoryPlan, KeepsEveryPromise, ()) {
  const auto size = [] { return rc::gen::inRange<std::uint64_t>(0, 64 * gib); };
  const DeviceFootprint f{*size(), *size(), *rc::gen::inRange<std::uint64_t>(1, 16 * gib), *size()};
  const std::uint64_t budget = *rc::gen::inRange<std::uint64_t>(0, 256 * gib);
  const std::uint32_t asked = *rc::gen::inRange<std::uint32_t>(1, 9);
  const bool key_on_device_asked = *rc::gen::arbitrary<bool>();
  const bool key_fits = key_on_device_asked && device_bytes(f, 1, true) <= budget;
  if (!key_fits && device_bytes(f, 1, false) > budget) {
    RC_ASSERT_THROWS_AS(plan_device_memory(f, budget, asked, key_on_device_asked), std::invalid_argument);
    return;
  }
  const DevicePlan plan = plan_device_memory(f, budget, asked, key_on_device_asked);
  RC_ASSERT(plan.bytes <= budget);
  RC_ASSERT(plan.bytes == device_bytes(f, plan.workers_per_gpu, plan.key_on_device));
  RC_ASSERT(plan.key_on_device == key_fits);
  RC_ASSERT(plan.workers_per_gpu >= 1u);
  RC_ASSERT(plan.workers_per_gpu <= asked);
  if (plan.workers_per_gpu < asked) RC_ASSERT(device_bytes(f, plan.workers_per_gpu + 1, plan.key_on_device) > budget);
  RC_ASSERT(plan.change.empty() == (plan.workers_per_gpu == asked && plan.key_on_device == key_on_device_asked));
}

}  // namespace
}  // namespace zkpipe::policy
