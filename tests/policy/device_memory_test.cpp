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

// Dense at 2^24 on the CUDA backend, roughly (what CudaBackend::device_footprint offers): for
// each of a, b1, l, h (G1) and b2 (G2) a table of one set (11 times its array beyond it) and one
// of two sets (5 times), the latter with more buckets' workspace, a shorter build and less saved.
DeviceFootprint footprint_2_24() {
  DeviceFootprint f{9 * gib, 12 * gib, 2 * gib, gib / 2, {}};
  for (KeyArray array : {KeyArray::a, KeyArray::b1, KeyArray::l, KeyArray::h}) {
    const bool h = array == KeyArray::h;
    f.fixed_bases.push_back({{array, 1}, 33 * gib / 2, 4 * gib, 1.4, h ? 0.024 : 0.022});
    f.fixed_bases.push_back({{array, 2}, 15 * gib / 2, 5 * gib, 1.2, h ? 0.017 : 0.016});
  }
  f.fixed_bases.push_back({{KeyArray::b2, 1}, 33 * gib, 5 * gib, 3.4, 0.068});
  f.fixed_bases.push_back({{KeyArray::b2, 2}, 15 * gib, 6 * gib, 3.0, 0.046});
  return f;
}

DevicePlan with_tables(const DeviceFootprint& f, std::uint64_t budget, FixedBaseTables tables, std::uint32_t partitions) {
  DevicePlan plan = plan_device_memory(f, budget, 2, true);
  plan_fixed_bases(f, budget, tables, partitions, plan);
  return plan;
}

TEST(FixedBasePlan, TakesTheChoiceThatSavesTheMostAndChargesEachCurvesWorkspaceOnce) {
  const DevicePlan plan = with_tables(footprint_2_24(), 126 * gib, FixedBaseTables::on, 8);
  // 9 + 12 + 2 x 2 = 25 GiB, then 101 GiB of tables: b2's of one set with its workspace (38),
  // three G1 tables of one set (49.5) and l's of two (7.5) with G1's larger workspace (5), saving
  // 152 ms; every G1 table of one set beside b2's would take 108, l's and h's of two sets save 145,
  // and b2's of two sets takes a's and b1's of two sets (one decomposition of the witness): 124.
  EXPECT_EQ(plan.fixed_bases, (std::vector<FixedBaseTable>{
                                  {KeyArray::a, 1}, {KeyArray::b1, 1}, {KeyArray::l, 2}, {KeyArray::h, 1}, {KeyArray::b2, 1}}));
  EXPECT_EQ(plan.bytes, 125 * gib);
  EXPECT_EQ(plan.workers_per_gpu, 2u);
}

TEST(FixedBasePlan, AutomaticBuildsOnlyTablesThatPayWithinTheJob) {
  const DeviceFootprint f = footprint_2_24();
  EXPECT_TRUE(with_tables(f, 1000 * gib, FixedBaseTables::automatic, 8).fixed_bases.empty());
  // b2's table of one set pays after 3.4 / 0.068 = 50 partitions, h's after 58.3, the other G1
  // tables of one set after 63.6.
  EXPECT_EQ(with_tables(f, 1000 * gib, FixedBaseTables::automatic, 51).fixed_bases, (std::vector<FixedBaseTable>{{KeyArray::b2, 1}}));
  EXPECT_EQ(with_tables(f, 1000 * gib, FixedBaseTables::automatic, 63).fixed_bases,
            (std::vector<FixedBaseTable>{{KeyArray::h, 1}, {KeyArray::b2, 1}}));
  EXPECT_EQ(with_tables(f, 1000 * gib, FixedBaseTables::automatic, 64).fixed_bases.size(), 5u);
  const DevicePlan unlimited = with_tables(f, 1000 * gib, FixedBaseTables::on, 1);
  EXPECT_EQ(unlimited.fixed_bases.size(), 5u);
  for (const FixedBaseTable& table : unlimited.fixed_bases) EXPECT_EQ(table.sets, 1u);
}

TEST(FixedBasePlan, MayBuildFollowsTheSettingAndThePayback) {
  const DeviceFootprint f = footprint_2_24();
  const FixedBaseOption b2 = *std::ranges::find(f.fixed_bases, FixedBaseTable{KeyArray::b2, 1}, &FixedBaseOption::table);
  EXPECT_TRUE(may_build(b2, FixedBaseTables::on, 1));
  EXPECT_FALSE(may_build(b2, FixedBaseTables::off, 1000));
  EXPECT_FALSE(may_build(b2, FixedBaseTables::automatic, 49));  // pays after 3.4 / 0.068 = 50 partitions
  EXPECT_TRUE(may_build(b2, FixedBaseTables::automatic, 51));
}

TEST(FixedBasePlan, TablesOfTwoSetsWhereThoseOfOneDoNotFit) {
  // 60 GiB for tables: every table of two sets (21 + 4 x 7.5 + 5 = 56 GiB) saves 111 ms, more than
  // b2's of one set beside l's and h's of two (101) or any G1 tables of one set.
  const DevicePlan plan = with_tables(footprint_2_24(), 85 * gib, FixedBaseTables::on, 8);
  EXPECT_EQ(plan.fixed_bases.size(), 5u);
  for (const FixedBaseTable& table : plan.fixed_bases) EXPECT_EQ(table.sets, 2u);
  EXPECT_EQ(plan.bytes, 25 * gib + 21 * gib + 35 * gib);
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

// The option a planned table came from.
const FixedBaseOption& option_of(const DeviceFootprint& f, const FixedBaseTable& table) {
  const auto option = std::ranges::find(f.fixed_bases, table, &FixedBaseOption::table);
  RC_ASSERT(option != f.fixed_bases.end());
  return *option;
}

RC_GTEST_PROP(FixedBasePlan, KeepsEveryPromise, ()) {
  const auto size = [] { return rc::gen::inRange<std::uint64_t>(0, 64 * gib); };
  DeviceFootprint f{*size(), *size(), *rc::gen::inRange<std::uint64_t>(1, 16 * gib), *size(), {}};
  for (KeyArray array : {KeyArray::a, KeyArray::b1, KeyArray::l, KeyArray::h, KeyArray::b2})
    for (std::uint32_t sets : {1u, 2u})
      if (*rc::gen::arbitrary<bool>())
        f.fixed_bases.push_back(
            {{array, sets}, *size(), *size(), *rc::gen::inRange(0, 100) / 10.0, *rc::gen::inRange(0, 100) / 1000.0});
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
  std::uint64_t charged[2] = {0, 0};
  std::uint32_t witness_sets = 0;
  for (const FixedBaseTable& table : plan.fixed_bases) {
    const FixedBaseOption& option = option_of(f, table);
    RC_ASSERT(std::ranges::count(plan.fixed_bases, table.array, &FixedBaseTable::array) == 1);
    if (tables == FixedBaseTables::automatic) RC_ASSERT(partitions * option.saving_s > option.build_s);
    if (takes_whole_witness(table.array)) {
      RC_ASSERT(witness_sets == 0 || witness_sets == table.sets);
      witness_sets = table.sets;
    }
    least_more += option.table_bytes;
    charged[in_g2(table.array)] = std::max(charged[in_g2(table.array)], option.workspace_bytes);
  }
  RC_ASSERT(plan.bytes - without.bytes == least_more + charged[0] + charged[1]);
  // An array left without a table has none that would save time and fit beside those taken (its
  // workspace beyond the largest charged for its curve), of the witness's sets where it takes it.
  if (tables != FixedBaseTables::on || !plan.key_on_device) return;
  for (const FixedBaseOption& option : f.fixed_bases) {
    const auto& [array, sets] = option.table;
    if (option.saving_s <= 0 || std::ranges::count(plan.fixed_bases, array, &FixedBaseTable::array) > 0) continue;
    if (takes_whole_witness(array) && witness_sets != 0 && witness_sets != sets) continue;
    const std::uint64_t charge = charged[in_g2(array)];
    RC_ASSERT(plan.bytes + option.table_bytes + std::max(option.workspace_bytes, charge) - charge > budget);
  }
}

}  // namespace
}  // namespace zkpipe::policy
