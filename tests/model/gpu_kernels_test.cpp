// Tests of the model's GPU kernels: the engine's order and items, the domain's edge, and
// supraseal's order where a calibration costs tail_msm.
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_kernels.hpp"

namespace zkpipe::model {
namespace {

using trace::Phase;

std::vector<std::pair<Phase, std::uint64_t>> items_of(const std::vector<GpuKernel>& kernels) {
  std::vector<std::pair<Phase, std::uint64_t>> items;
  for (const GpuKernel& kernel : kernels) items.emplace_back(kernel.phase, kernel.items);
  return items;
}

// 1000 constraints, 23 public inputs; z: 300 ones (ONE among them), 400 significant (the public
// inputs among them) per 1000 constraints.
Workload workload() {
  Workload workload;
  workload.constraints_per_partition = 1000;
  workload.zero_scalar_share = workload.one_scalar_share = 0.3;
  workload.public_inputs = 23;
  return workload;
}

TEST(GpuKernels, AreTheEnginesInItsOrderWithItsItems) {
  std::map<Phase, PhaseCost> costs;
  for (Phase phase : {Phase::ntt, Phase::msm_h, Phase::batch_add, Phase::msm_a, Phase::msm_b1, Phase::msm_l, Phase::msm_b2})
    costs[phase] = {0.5, 1.0, std::nullopt};
  const std::vector<GpuKernel> kernels = gpu_kernels(workload(), costs);
  EXPECT_EQ(items_of(kernels), (std::vector<std::pair<Phase, std::uint64_t>>{
                                   {Phase::ntt, 1024}, {Phase::msm_h, 1024},
                                   {Phase::batch_add, 300}, {Phase::msm_a, 400},
                                   {Phase::batch_add, 300}, {Phase::msm_b1, 400},
                                   {Phase::batch_add, 299}, {Phase::msm_l, 377},
                                   {Phase::batch_add, 300}, {Phase::msm_b2, 400}}));
  EXPECT_DOUBLE_EQ(kernels.front().seconds, 0.5 + 1024 / 1e6);
}

// Where the key splits B, B1 and B2 take z less the scalars absent from B; A and L all of theirs.
TEST(GpuKernels, BOneAndBTwoLeaveOutWhatIsAbsentFromB) {
  Workload split_b = workload();
  split_b.b_absent_one_share = 0.01;
  split_b.b_absent_significant_share = 0.1;
  std::map<Phase, PhaseCost> costs;
  for (Phase phase : {Phase::batch_add, Phase::msm_a, Phase::msm_b1, Phase::msm_l, Phase::msm_b2}) costs[phase] = {};
  EXPECT_EQ(items_of(gpu_kernels(split_b, costs)), (std::vector<std::pair<Phase, std::uint64_t>>{
                                                      {Phase::batch_add, 300}, {Phase::msm_a, 400},
                                                      {Phase::batch_add, 290}, {Phase::msm_b1, 300},
                                                      {Phase::batch_add, 299}, {Phase::msm_l, 377},
                                                      {Phase::batch_add, 290}, {Phase::msm_b2, 300}}));
}

TEST(GpuKernels, TheDomainIsThePowerOfTwoAboveConstraintsAndPublicInputs) {
  Workload at_the_edge = workload();
  at_the_edge.public_inputs = 24;  // 1024 rows: the domain doubles
  EXPECT_EQ(at_the_edge.domain_size(), 2048u);
  EXPECT_EQ(gpu_kernels(at_the_edge, {{Phase::ntt, {}}}).front().items, 2048u);
}

TEST(GpuKernels, TheSharesAreOfZsScalars) {
  Workload longer_z = workload();
  longer_z.variables = 2000;
  EXPECT_EQ(items_of(gpu_kernels(longer_z, {{Phase::batch_add, {}}, {Phase::msm_a, {}}})),
            (std::vector<std::pair<Phase, std::uint64_t>>{{Phase::batch_add, 600}, {Phase::msm_a, 800},
                                                           {Phase::batch_add, 600}, {Phase::batch_add, 599},
                                                           {Phase::batch_add, 600}}));
}

TEST(GpuKernels, ATailMsmCostRunsSuprasealsOrderAndPhasesWithoutCostAreNotRun) {
  const std::map<Phase, PhaseCost> costs{{Phase::ntt, {}}, {Phase::batch_add, {}}, {Phase::tail_msm, {}}};
  EXPECT_EQ(items_of(gpu_kernels(workload(), costs)),
            (std::vector<std::pair<Phase, std::uint64_t>>{
                {Phase::ntt, 1024}, {Phase::batch_add, 3 * 300 + 299}, {Phase::tail_msm, 2 * 400 + 377}}));
}

// The key's points each kernel reads, in the chunks the engine's CUDA backend streams them in
// (DeviceBases::for_each_chunk): H's domain; A's, B1's and B2's z and L's witness twice, for the
// batch addition and for the tail MSM; G1 points 96 bytes, G2 points 192.
TEST(GpuKernels, ReadTheKeysPointsInTheEnginesStreamedChunks) {
  Workload streamed = workload();
  streamed.stream_chunk_points = 256;
  std::map<Phase, PhaseCost> costs;
  for (Phase phase : {Phase::ntt, Phase::msm_h, Phase::batch_add, Phase::msm_a, Phase::msm_b1, Phase::msm_l, Phase::msm_b2})
    costs[phase] = {0.5, 1.0, std::nullopt};
  auto chunks = [](std::vector<std::uint64_t> points, std::uint64_t point_bytes) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> expected;
    for (std::uint64_t p : points) expected.emplace_back(p, p * point_bytes);
    return expected;
  };
  const auto z_g1 = chunks({256, 256, 256, 232}, 96), witness_g1 = chunks({256, 256, 256, 208}, 96);
  const auto z_g2 = chunks({256, 256, 256, 232}, 192);
  const std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> expected{
      {}, chunks({256, 256, 256, 256}, 96), z_g1, z_g1, z_g1, z_g1, witness_g1, witness_g1, z_g2, z_g2};
  const std::vector<GpuKernel> kernels = gpu_kernels(streamed, costs);
  ASSERT_EQ(kernels.size(), expected.size());
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> read;
    std::uint64_t points = 0;
    for (const BaseChunk& chunk : kernels[k].base_chunks) {
      read.emplace_back(chunk.points, chunk.bytes);
      points += chunk.points;
    }
    EXPECT_EQ(read, expected[k]) << "kernel " << k << " (" << trace::phase_name(kernels[k].phase) << ")";
    EXPECT_EQ(kernels[k].base_points, points);
  }
}

// An MSM without scalars of a kind reads no bases for them (the engine streams up to the last
// selected base: none).
TEST(GpuKernels, AKernelWithoutScalarsReadsNoBases) {
  Workload no_ones = workload();
  no_ones.one_scalar_share = 0;
  const std::vector<GpuKernel> kernels = gpu_kernels(no_ones, {{Phase::batch_add, {}}, {Phase::msm_a, {}}});
  ASSERT_EQ(kernels.size(), 5u);
  EXPECT_EQ(kernels[0].base_points, 0u);  // A's batch addition: no 1-scalar in z
  EXPECT_EQ(kernels[1].base_points, 1000u);
  EXPECT_EQ(kernels[3].base_points, 0u);  // L's batch addition
}

}  // namespace
}  // namespace zkpipe::model
