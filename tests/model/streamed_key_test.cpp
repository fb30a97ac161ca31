// Tests of a streamed key in the model (srs_residency pinned-host): each kernel that reads the
// key's points copies them in the engine's chunks, inside its span, while it works on the chunk
// before, each chunk costing its phase's per-chunk cost; on the H200's streamed 2^24 run the
// simulated chunks are the measured ones, and the GPU time the measured.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
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

// The kernels of one partition, nothing else running, with the key streamed in chunks of 300,000
// points.
Scenario one_streamed_partition() {
  Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  scenario = with_setting(scenario, "workload.partitions", "1");
  scenario = with_setting(scenario, "workload.stream_chunk_points", "300000");
  return with_setting(scenario, "policy.srs_residency", "\"pinned-host\"");
}

std::vector<trace::Span> kernels_of(const trace::Trace& spans) {
  std::vector<trace::Span> kernels;
  std::ranges::copy_if(spans, std::back_inserter(kernels), trace::is_gpu_kernel);
  return kernels;
}

// Each kernel span holds its chunks' copies, and lasts the first chunk's copy, then per chunk the
// longer of its work (its share of the kernel and the chunk's own cost) and the next chunk's copy
// (the engine's DeviceBases::for_each_chunk): streamed_kernel_s, on the chunks' copies as they ran.
TEST(StreamedKey, EachKernelCopiesItsChunksWhileItWorksOnTheOneBefore) {
  Scenario scenario = one_streamed_partition();
  for (Phase phase : {Phase::batch_add, Phase::msm_b1, Phase::msm_l, Phase::msm_b2})
    scenario.calibration.gpu_phase_cost[phase] = {0.001, 0.01, 0.002};
  const double copy_gbps = copy_rate_gbps(scenario, scenario.calibration.h2d_pinned, 0, 1);
  const trace::Trace spans = simulate_in_logical_time(scenario).spans;
  const std::vector<trace::Span> kernels = kernels_of(spans);
  const std::vector<GpuKernel> expected = gpu_kernels(scenario.workload, scenario.calibration.gpu_phase_cost);
  ASSERT_EQ(kernels.size(), expected.size());
  std::uint64_t streamed_bytes = 0;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    SCOPED_TRACE(fmt::format("kernel {} ({})", k, trace::phase_name(kernels[k].phase)));
    const std::vector<trace::Span> chunks = chunks_in(spans, kernels[k]);
    ASSERT_EQ(chunks.size(), expected[k].base_chunks.size());
    auto copy_s = [&](std::size_t chunk) { return double(expected[k].base_chunks[chunk].bytes) / (copy_gbps * 1e9); };
    double duration_s = chunks.empty() ? expected[k].seconds : copy_s(0);
    std::vector<double> work_s, copied_s;
    for (std::size_t chunk = 0; chunk < chunks.size(); ++chunk) {
      EXPECT_EQ(chunks[chunk].bytes, expected[k].base_chunks[chunk].bytes);
      EXPECT_EQ(chunks[chunk].resource, "pcie0:h2d");
      EXPECT_LE(chunks[chunk].end_s, kernels[k].end_s + 1e-12);
      streamed_bytes += chunks[chunk].bytes;
      const double share_s =
          expected[k].seconds * double(expected[k].base_chunks[chunk].points) / double(expected[k].base_points);
      const double chunk_s = expected[k].phase == Phase::msm_h || expected[k].phase == Phase::msm_a ? 0 : 0.002;
      EXPECT_DOUBLE_EQ(expected[k].chunk_work_s(chunk), share_s + chunk_s);
      duration_s += std::max(share_s + chunk_s, chunk + 1 < chunks.size() ? copy_s(chunk + 1) : 0.0);
      work_s.push_back(share_s + chunk_s);
      copied_s.push_back(chunks[chunk].duration_s());
    }
    EXPECT_NEAR(kernels[k].end_s - kernels[k].start_s, duration_s, 1e-9);
    if (!chunks.empty()) {
      EXPECT_NEAR(kernels[k].end_s - kernels[k].start_s, streamed_kernel_s(work_s, copied_s), 1e-9);
    }
  }
  // H's domain, then A's, B1's, L's and B2's points twice each (batch addition and tail MSM).
  const Workload& w = scenario.workload;
  EXPECT_EQ(streamed_bytes, 96 * w.domain_size() + 2 * (96 * (3 * w.z_length() - 1) + 192 * w.z_length()));
}

// The engine runs a kernel over a streamed key once per chunk, each run with its own fixed work:
// each kernel that reads the key lasts its chunks x its phase's stream_chunk_s longer (where its
// work bounds it, as here: a chunk's copy takes 0.5 ms, its work 10 ms and more), the ntt, which
// reads none, as long.
TEST(StreamedKey, EachChunkCostsItsPhasesPerChunkCostMore) {
  Scenario scenario = one_streamed_partition();
  const std::vector<Phase> phases{Phase::ntt,    Phase::msm_h, Phase::batch_add, Phase::msm_a,
                                  Phase::msm_b1, Phase::msm_l, Phase::msm_b2};
  for (Phase phase : phases) scenario.calibration.gpu_phase_cost[phase] = {0.04, 0, 0.0};
  const std::vector<trace::Span> free = kernels_of(simulate_in_logical_time(scenario).spans);
  std::map<Phase, double> chunk_s;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    chunk_s[phases[p]] = 0.001 * double(p + 1);
    scenario.calibration.gpu_phase_cost[phases[p]].stream_chunk_s = chunk_s[phases[p]];
  }
  const trace::Trace spans = simulate_in_logical_time(scenario).spans;
  const std::vector<trace::Span> costed = kernels_of(spans);
  ASSERT_EQ(costed.size(), free.size());
  for (std::size_t k = 0; k < costed.size(); ++k) {
    SCOPED_TRACE(fmt::format("kernel {} ({})", k, trace::phase_name(costed[k].phase)));
    const std::size_t chunks = chunks_in(spans, costed[k]).size();
    EXPECT_EQ(chunks, costed[k].phase == Phase::ntt ? 0u : costed[k].phase == Phase::msm_h ? 7u : 4u);  // 2^21, 2^20 points
    EXPECT_NEAR(costed[k].duration_s() - free[k].duration_s(), double(chunks) * chunk_s[costed[k].phase], 1e-9);
  }
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
// A run of the H200's 2^24 experiment with the streamed key (stream24-h200-20261203).
MeasuredRun stream24_run(const std::string& name) {
  static const std::vector<MeasuredRun> runs =
      find_measured_runs(testing::source_dir() / "scenarios/calibration/traces/stream24-h200-20261203");
  return *std::ranges::find(runs, "poseidon-merkle/" + name, &MeasuredRun::name);
}

// The scenario that predicts stream24's after-pinned-host run from a calibration on `runs`.
Scenario streamed_h200_scenario(const testing::ScratchDirectory& scratch, const std::vector<std::string>& runs) {
  std::vector<std::filesystem::path> traces;
  for (const std::string& run : runs) traces.push_back(stream24_run(run).trace);
  const auto calibration = scratch.path() / fmt::format("calibration{}.toml", runs.size());
  std::ofstream(calibration) << calibration_toml(fit_traces(traces), "stream24");
  const auto h2d = testing::source_dir() / "scenarios/calibration/h200-h2d.toml";
  return parse_scenario_text(scenario_toml_for_run(stream24_run("after-pinned-host"), {h2d, calibration}), "s.toml",
                             scratch.path())
      .base;
}

// The GPU's seconds per partition: its kernels' spans over the partitions they ran.
double gpu_s_per_partition(const trace::Trace& spans) {
  double busy_s = 0;
  std::set<std::uint32_t> partitions;
  for (const trace::Span& span : kernels_of(spans)) {
    busy_s += span.duration_s();
    partitions.insert(span.partition);
  }
  return busy_s / double(partitions.size());
}

TEST(StreamedKey, TheH200StreamedRunsChunksAreTheEngines) {
  const testing::ScratchDirectory scratch;
  const MeasuredRun streamed = stream24_run("after-pinned-host");
  const Scenario scenario = streamed_h200_scenario(scratch, {"after-pinned"});
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

// The same run's GPU time: 1.140 s a partition measured, 0.593 s with the key on the device.
// Calibrated on both runs, the fit's per-chunk costs are the defaults (within 0.1 ms), and the
// model predicts the streamed run's GPU time within 3 %, from its on-device twin alone (the
// defaults) as from both; the model's copy engine serves a kernel's first chunk after the other
// worker's a/b/c copy, where the engine's interleave (~17 ms more on msm_h). Without its
// per-chunk cost, the model predicted 0.790 s.
TEST(StreamedKey, TheH200StreamedRunsGpuTimeIsTheMeasured) {
  const testing::ScratchDirectory scratch;
  const CalibrationFit both = fit_traces({stream24_run("after-pinned").trace, stream24_run("after-pinned-host").trace});
  for (const auto& [phase, cost] : both.gpu_phase_cost) {
    SCOPED_TRACE(trace::phase_name(phase));
    if (phase == Phase::ntt) {
      EXPECT_FALSE(cost.stream_chunk_s) << "the ntt reads no key";
    } else {
      ASSERT_TRUE(cost.stream_chunk_s);
      EXPECT_NEAR(*cost.stream_chunk_s, default_stream_chunk_s(phase), 1e-4);
    }
  }
  const double measured_s = gpu_s_per_partition(trace::read_csv_file(stream24_run("after-pinned-host").trace));
  EXPECT_NEAR(measured_s, 1.140, 0.001);
  for (const auto& runs : {std::vector<std::string>{"after-pinned"}, std::vector<std::string>{"after-pinned", "after-pinned-host"}}) {
    SCOPED_TRACE(fmt::format("calibrated on {}", fmt::join(runs, ", ")));
    EXPECT_NEAR(gpu_s_per_partition(simulate(streamed_h200_scenario(scratch, runs)).spans), measured_s, 0.03 * measured_s);
  }
}

// The previous binary's streamed run (before-pinned-host) traced no chunk: its kernels' copies
// hide in their spans, which give no cost. Beside its on-device twin they are left out (the MSMs
// cost what the twin alone gives); alone they leave the MSMs without a cost, which is an error.
TEST(StreamedKey, KernelsOfAStreamedRunWithoutItsChunksGiveNoCost) {
  const auto on_device = stream24_run("before-pinned").trace, streamed = stream24_run("before-pinned-host").trace;
  const CalibrationFit twin = fit_traces({on_device}), both = fit_traces({on_device, streamed});
  for (Phase phase : {Phase::msm_h, Phase::batch_add, Phase::msm_a, Phase::msm_b2}) {
    EXPECT_EQ(both.gpu_phase_cost.at(phase).fixed_s, twin.gpu_phase_cost.at(phase).fixed_s) << trace::phase_name(phase);
    EXPECT_FALSE(both.gpu_phase_cost.at(phase).stream_chunk_s) << trace::phase_name(phase);
  }
  EXPECT_THROW(fit_traces({streamed}), std::runtime_error);
}

}  // namespace
}  // namespace zkpipe::model
