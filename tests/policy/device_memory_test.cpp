// Tests of policy::plan_device_memory() and plan_fixed_bases(): named cases at the sizes the H200
// meets, then RapidCheck properties over random footprints and budgets that check every promise
// of the contract.
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "policy/device_memory.hpp"

namespace zkpipe::policy {
namespace {

constexpr std::uint64_t gib = 1ull << 30;

// Poseidon-merkle at 2^26 on the CUDA backend, roughly: the key's bases, the shared workspaces,
// a worker's quotient and witness buffers, two base chunks.
DeviceFootprint footprint_2_26() { return {37 * gib, 18 * gib, 9 * gib, gib / 2, {}}; }

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
  const DeviceFootprint f{*size(), *size(), *rc::gen::inRange<std::uint64_t>(1, 16 * gib), *size(), {}};
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

// Dense at 2^24 on the CUDA backend, roughly (what CudaBackend::device_footprint offers): the
// tables of a, b1, l, h (G1) and b2 (G2), each 11 times its array beyond it.
DeviceFootprint footprint_2_24() {
  DeviceFootprint f{9 * gib, 12 * gib, 2 * gib, gib / 2, {}};
  for (KeyArray array : {KeyArray::a, KeyArray::b1, KeyArray::l, KeyArray::h})
    f.fixed_bases.push_back({array, 33 * gib / 2, 4 * gib, 1.4, 0.022});
  f.fixed_bases.push_back({KeyArray::b2, 33 * gib, 5 * gib, 3.4, 0.068});
  return f;
}

DevicePlan with_tables(const DeviceFootprint& f, std::uint64_t budget, FixedBaseTables tables, std::uint32_t partitions) {
  DevicePlan plan = plan_device_memory(f, budget, 2, true);
  plan_fixed_bases(f, budget, tables, partitions, plan);
  return plan;
}

TEST(FixedBasePlan, TakesTheMostSavingPerByteFirstAndChargesEachCurvesWorkspaceOnce) {
  const DevicePlan plan = with_tables(footprint_2_24(), 126 * gib, FixedBaseTables::on, 8);
  // 9 + 12 + 2 x 2 = 25 GiB, b2 + its workspace 38 GiB more, then G1 tables: the first with its
  // workspace (20.5 GiB), the next at 16.5 each while they fit 126 GiB.
  EXPECT_EQ(plan.fixed_bases, (std::vector<KeyArray>{KeyArray::b2, KeyArray::a, KeyArray::b1, KeyArray::l}));
  EXPECT_EQ(plan.bytes, 25 * gib + 38 * gib + 41 * gib / 2 + 33 * gib);
  EXPECT_EQ(plan.workers_per_gpu, 2u);
}

TEST(FixedBasePlan, AutomaticBuildsOnlyTablesThatPayWithinTheJob) {
  const DeviceFootprint f = footprint_2_24();
  EXPECT_TRUE(with_tables(f, 1000 * gib, FixedBaseTables::automatic, 8).fixed_bases.empty());
  // b2 pays after 3.4 / 0.068 = 50 partitions, the G1 tables after 1.4 / 0.022 = 63.6.
  EXPECT_EQ(with_tables(f, 1000 * gib, FixedBaseTables::automatic, 51).fixed_bases, std::vector<KeyArray>{KeyArray::b2});
  EXPECT_EQ(with_tables(f, 1000 * gib, FixedBaseTables::automatic, 63).fixed_bases.size(), 1u);
  EXPECT_EQ(with_tables(f, 1000 * gib, FixedBaseTables::automatic, 64).fixed_bases.size(), 5u);
  EXPECT_EQ(with_tables(f, 1000 * gib, FixedBaseTables::on, 1).fixed_bases.size(), 5u);
}

TEST(FixedBasePlan, NoneWhenOffOrWithTheKeyStreamed) {
  const DeviceFootprint f = footprint_2_24();
  EXPECT_TRUE(with_tables(f, 1000 * gib, FixedBaseTables::off, 1000).fixed_bases.empty());
  DevicePlan streamed = plan_device_memory(f, 20 * gib, 2, true);
  ASSERT_FALSE(streamed.key_on_device);
  const std::uint64_t bytes = streamed.bytes;
  plan_fixed_bases(f, 1000 * gib, FixedBaseTables::on, 1000, streamed);
  EXPECT_TRUE(streamed.fixed_bases.empty());
  EXPECT_EQ(streamed.bytes, bytes);
}

RC_GTEST_PROP(FixedBasePlan, KeepsEveryPromise, ()) {
  const auto size = [] { return rc::gen::inRange<std::uint64_t>(0, 64 * gib); };
  DeviceFootprint f{*size(), *size(), *rc::gen::inRange<std::uint64_t>(1, 16 * gib), *size(), {}};
  for (KeyArray array : {KeyArray::a, KeyArray::b1, KeyArray::l, KeyArray::h, KeyArray::b2})
    if (*rc::gen::arbitrary<bool>())
      f.fixed_bases.push_back({array, *size(), *size(), *rc::gen::inRange(0, 100) / 10.0, *rc::gen::inRange(0, 100) / 1000.0});
  const std::uint64_t budget = *rc::gen::inRange<std::uint64_t>(0, 512 * gib);
  const auto tables = *rc::gen::element(FixedBaseTables::off, FixedBaseTables::automatic, FixedBaseTables::on);
  const std::uint32_t partitions = *rc::gen::inRange<std::uint32_t>(1, 200);
  if (device_bytes(f, 1, false) > budget) return;
  DevicePlan plan = plan_device_memory(f, budget, *rc::gen::inRange<std::uint32_t>(1, 5), true);
  const DevicePlan without = plan;
  plan_fixed_bases(f, budget, tables, partitions, plan);
  RC_ASSERT(plan.bytes <= budget);
  RC_ASSERT(plan.workers_per_gpu == without.workers_per_gpu);
  RC_ASSERT(plan.key_on_device == without.key_on_device);
  if (tables == FixedBaseTables::off || !plan.key_on_device) RC_ASSERT(plan.fixed_bases.empty());
  std::uint64_t least_more = 0;  // what the plan adds is at least its tables' bytes
  for (KeyArray array : plan.fixed_bases) {
    const auto option = std::ranges::find(f.fixed_bases, array, &FixedBaseOption::array);
    RC_ASSERT(option != f.fixed_bases.end());
    if (tables == FixedBaseTables::automatic) RC_ASSERT(partitions * option->saving_s > option->build_s);
    least_more += option->table_bytes;
  }
  RC_ASSERT(plan.bytes - without.bytes >= least_more);
  // With `on`, a table left out does not fit beside those taken, with what its curve's workspace
  // would add to the largest charged for the tables taken.
  if (tables == FixedBaseTables::on && plan.key_on_device)
    for (const FixedBaseOption& option : f.fixed_bases) {
      if (std::ranges::find(plan.fixed_bases, option.array) != plan.fixed_bases.end()) continue;
      std::uint64_t charged = 0;
      for (const FixedBaseOption& taken : f.fixed_bases)
        if (in_g2(taken.array) == in_g2(option.array) && std::ranges::find(plan.fixed_bases, taken.array) != plan.fixed_bases.end())
          charged = std::max(charged, taken.workspace_bytes);
      RC_ASSERT(plan.bytes + option.table_bytes + std::max(option.workspace_bytes, charged) - charged > budget);
    }
}

}  // namespace
}  // namespace zkpipe::policy
