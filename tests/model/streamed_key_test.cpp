// Tests of a streamed key in the model (srs_residency pinned-host): each kernel that reads the
// key's points copies them in the engine's chunks, inside its span, while it works on the chunk
// before; and on the H200's streamed 2^24 run the simulated chunks are the measured ones.
#include <algorithm>
#include <fstream>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "calibration.hpp"
#include "costed_work.hpp"
#include "gpu_kernels.hpp"
#include "simulation.hpp"
#include "test_support.hpp"
#include "trace/trace_csv.hpp"
#include "validation.hpp"

namespace zkpipe::model {
namespace {

using trace::Phase;

// The key's chunks copied inside `kernel`: the itemless copies of its partition that start in it.
std::vector<trace::Span> chunks_in(const trace::Trace& spans, const trace::Span& kernel) {
  std::vector<trace::Span> chunks;
  std::ranges::copy_if(spans, std::back_inserter(chunks), [&](const trace::Span& span) {
    return span.partition == kernel.partition && span.phase == Phase::h2d && span.items == 0 &&
           span.start_s >= kernel.start_s && span.start_s < kernel.end_s;
  });
  return chunks;
}

// One partition, nothing else running: each kernel span holds its chunks' copies, and lasts the
// first chunk's copy, then per chunk the longer of its share of the kernel and the next chunk's
// copy (the engine's DeviceBases::for_each_chunk).
TEST(StreamedKey, EachKernelCopiesItsChunksWhileItWorksOnTheOneBefore) {
  Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  scenario = with_setting(scenario, "workload.partitions", "1");
  scenario = with_setting(scenario, "workload.stream_chunk_points", "300000");
  scenario = with_setting(scenario, "policy.srs_residency", "\"pinned-host\"");
  for (Phase phase : {Phase::batch_add, Phase::msm_b1, Phase::msm_l, Phase::msm_b2})
    scenario.calibration.gpu_phase_cost[phase] = {0.001, 0.01};
  const double copy_gbps = copy_rate_gbps(scenario, scenario.calibration.h2d_pinned, 0, 1);
  const trace::Trace spans = simulate_in_logical_time(scenario).spans;
  std::vector<trace::Span> kernels;
  std::ranges::copy_if(spans, std::back_inserter(kernels), trace::is_gpu_kernel);
  const std::vector<GpuKernel> expected = gpu_kernels(scenario.workload, scenario.calibration.gpu_phase_cost);
  ASSERT_EQ(kernels.size(), expected.size());
  std::uint64_t streamed_bytes = 0;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    SCOPED_TRACE(fmt::format("kernel {} ({})", k, trace::phase_name(kernels[k].phase)));
    const std::vector<trace::Span> chunks = chunks_in(spans, kernels[k]);
    ASSERT_EQ(chunks.size(), expected[k].base_chunks.size());
    auto copy_s = [&](std::size_t chunk) { return double(expected[k].base_chunks[chunk].bytes) / (copy_gbps * 1e9); };
    double duration_s = chunks.empty() ? expected[k].seconds : copy_s(0);
    for (std::size_t chunk = 0; chunk < chunks.size(); ++chunk) {
      EXPECT_EQ(chunks[chunk].bytes, expected[k].base_chunks[chunk].bytes);
      EXPECT_EQ(chunks[chunk].resource, "pcie0:h2d");
      EXPECT_LE(chunks[chunk].end_s, kernels[k].end_s + 1e-12);
      streamed_bytes += chunks[chunk].bytes;
      const double share_s =
          expected[k].seconds * double(expected[k].base_chunks[chunk].points) / double(expected[k].base_points);
      duration_s += std::max(share_s, chunk + 1 < chunks.size() ? copy_s(chunk + 1) : 0.0);
    }
    EXPECT_NEAR(kernels[k].end_s - kernels[k].start_s, duration_s, 1e-9);
  }
  // H's domain, then A's, B1's, L's and B2's points twice each (batch addition and tail MSM).
  const Workload& w = scenario.workload;
  EXPECT_EQ(streamed_bytes, 96 * w.domain_size() + 2 * (96 * (3 * w.z_length() - 1) + 192 * w.z_length()));
}

// The key on the device: no chunk is copied, and the kernels take their calibrated seconds.
TEST(StreamedKey, AKeyOnTheDeviceCopiesNoChunk) {
  Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  scenario = with_setting(scenario, "workload.partitions", "1");
  const trace::Trace spans = simulate_in_logical_time(scenario).spans;
  EXPECT_EQ(std::ranges::count_if(spans, [](const trace::Span& s) { return s.phase == Phase::h2d && s.items == 0; }), 0);
}

// The H200's 2^24 run with the key's points in pinned host memory (stream24, after-pinned-host),
// simulated from its sidecar with a calibration of its on-device twin (after-pinned): each
// partition copies the measured 36 chunks, of the measured bytes but for the last chunk of each
// MSM's bases (the engine streams up to the last selected base, the model all of them: within
// 0.1 %), inside the measured kernels; the simulated trace keeps the trace's invariants (a copy
// inside a kernel is a streamed key's chunk).
TEST(StreamedKey, TheH200StreamedRunsChunksAreTheEngines) {
  const testing::ScratchDirectory scratch;
  const auto folder = testing::source_dir() / "scenarios/calibration/traces/stream24-h200-20261203";
  const std::vector<MeasuredRun> runs = find_measured_runs(folder);
  const auto run_named = [&](const std::string& name) {
    return *std::ranges::find(runs, "poseidon-merkle/" + name, &MeasuredRun::name);
  };
  const auto calibration = scratch.path() / "on-device.toml";
  std::ofstream(calibration) << calibration_toml(fit_traces({run_named("after-pinned").trace}), "after-pinned");
  const MeasuredRun streamed = run_named("after-pinned-host");
  const auto h2d = testing::source_dir() / "scenarios/calibration/h200-h2d.toml";
  const Scenario scenario =
      parse_scenario_text(scenario_toml_for_run(streamed, {h2d, calibration}), "s.toml", scratch.path()).base;
  ASSERT_EQ(scenario.policy.srs_residency, SrsResidency::pinned_host);
  const SimulationResult result = simulate(scenario);
  for (const trace::Violation& violation : trace::check_invariants(result.spans, trace_expectations(scenario, result)))
    ADD_FAILURE() << trace::invariant_name(violation.invariant) << ": " << violation.detail;
  const trace::Trace measured = trace::read_csv_file(streamed.trace), &simulated = result.spans;
  auto chunks_by_partition = [](const trace::Trace& spans) {
    std::map<std::uint32_t, std::vector<std::pair<Phase, std::uint64_t>>> chunks;  // the kernel, the chunk's bytes
    for (const trace::Span& kernel : spans)
      if (trace::is_gpu_kernel(kernel))
        for (const trace::Span& chunk : chunks_in(spans, kernel)) chunks[kernel.partition].emplace_back(kernel.phase, chunk.bytes);
    return chunks;
  };
  const auto measured_chunks = chunks_by_partition(measured), simulated_chunks = chunks_by_partition(simulated);
  ASSERT_EQ(simulated_chunks.size(), measured_chunks.size());
  for (const auto& [partition, chunks] : measured_chunks) {
    SCOPED_TRACE(fmt::format("partition {}", partition));
    const auto& predicted = simulated_chunks.at(partition);
    ASSERT_EQ(chunks.size(), 36u);
    ASSERT_EQ(predicted.size(), chunks.size());
    for (std::size_t chunk = 0; chunk < chunks.size(); ++chunk) {
      EXPECT_EQ(predicted[chunk].first, chunks[chunk].first) << "chunk " << chunk;
      EXPECT_NEAR(double(predicted[chunk].second), double(chunks[chunk].second), 1e-3 * double(chunks[chunk].second))
          << "chunk " << chunk;
    }
  }
}

}  // namespace
}  // namespace zkpipe::model
