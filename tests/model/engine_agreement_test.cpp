// The engine's fake backend and the model agree on a scenario's spans where costs are
// deterministic. The engine proves a tiny built-in circuit on threads, on a fake device whose copy
// and kernel delays (tens of ms) dominate its CPU maths, with one synthesis thread and one worker
// (so that no decision of the policy races). Its trace and sidecar become the model's scenario by
// the code that validates the model against measured runs (scenario_toml_for_run), with the fake
// device's delays as the copy's and the kernels' costs and the engine's medians as the host's;
// SimGrid and logical time run it. Both runs must have, per partition, the same phases in the
// same order with the same bytes and items on the same resources, each resource serving the
// same partitions' phases in the same order, and each GPU phase and a/b/c copy lasting its delay
// (the engine's a little longer: its thread wake-ups).
#include <algorithm>
#include <fstream>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "engine/pipeline/engine.hpp"
#include "engine/groth16/prover.hpp"
#include "fake_job.hpp"
#include "sidecar_facts.hpp"
#include "simulation.hpp"
#include "test_support.hpp"
#include "trace/trace_csv.hpp"
#include "validation.hpp"

namespace zkpipe::model {
namespace {

using trace::Phase;

constexpr double copy_delay_s = 0.1, kernel_delay_s = 0.1;
constexpr std::uint32_t partitions = 3;
// How much longer than its delay the engine's span may last: a thread's wake-up on a loaded
// machine (the fake device's CPU maths, MSMs of up to 2^10 points, 5-50 ms, runs inside the
// delay). Less than a delay, so that a delay counted twice shows.
constexpr double engine_slack_s = 0.06;

const std::vector<Phase> kernel_phases{Phase::ntt,    Phase::msm_h,  Phase::batch_add, Phase::msm_a,
                                       Phase::msm_b1, Phase::msm_l, Phase::msm_b2};

// The engine's run on the fake device, written as a measured run (trace.csv and its sidecar) once
// for the whole suite. Every partition proves the same witness: the model's workload has one
// shape (the scalars' shares), the built-in job's partitions each their own.
const MeasuredRun& engine_run() {
  static const testing::ScratchDirectory scratch;
  static const MeasuredRun run = [] {
    namespace pipeline = zk::pipeline;
    const pipeline::testing::SmallKey& key = pipeline::testing::small_key();
    pipeline::Job job = pipeline::builtin_job(*key.circuit, key.pk, partitions, 100);
    job.witness = [&key](std::uint32_t) { return zk::groth16::witness_of(*key.circuit, 100, key.pk); };
    pipeline::Settings settings;
    settings.backend = "fake";
    settings.synthesis_threads = 1;
    settings.workers_per_gpu = 1;
    settings.staging = policy::Staging::pinned;
    settings.pool_slabs = 2;
    settings.fake.copy_delay_s = copy_delay_s;
    settings.fake.kernel_delay_s = kernel_delay_s;
    const pipeline::JobReport report = pipeline::run_job(job, settings, [](const pipeline::ProvedPartition&) {}, {"fake", nullptr});
    if (report.proved != partitions) throw std::runtime_error(fmt::format("the engine proved {} of {}", report.proved, partitions));
    pipeline::write_trace_files(scratch.path() / "fake/run", job, report);
    return find_measured_runs(scratch.path()).at(0);
  }();
  return run;
}

double median_seconds(const trace::Trace& spans, Phase phase) {
  std::vector<double> seconds;
  for (const trace::Span& span : spans)
    if (span.phase == phase) seconds.push_back(span.end_s - span.start_s);
  std::ranges::sort(seconds);
  return seconds.at(seconds.size() / 2);
}

// The engine's run as the model's scenario: its sidecar's machine, settings and job; the fake
// device's delays as each kernel's cost and as the a/b/c copy's (the link's rate for the copy's
// bytes); the engine's medians for the host's work (synthesis, witness split, assembly,
// verification: real CPU work, whose times only decide which partition waits for what).
Scenario scenario_of(const MeasuredRun& run, const testing::ScratchDirectory& scratch) {
  const trace::Trace measured = trace::read_csv_file(run.trace);
  const double mconstraints = double(run.sidecar.scenario.constraints_per_partition.value()) / 1e6;
  std::string costs = fmt::format(
      "[h2d.pinned]\noverhead_s_per_gb = 0\nper_thread_s_per_gb = 0\nper_thread_squared_s_per_gb = 0\n"
      "[h2d.pageable]\noverhead_s_per_gb = 0\nper_thread_s_per_gb = 0\nper_thread_squared_s_per_gb = 0\n"
      "[synthesis]\ncore_s_per_mconstraint = {}\n"
      "[cpu]\nwitness_split_s = {}\nassemble_s = {}\nverify_s = {}\nassemble_in_compute_section = true\n",
      median_seconds(measured, Phase::synth) / mconstraints, median_seconds(measured, Phase::witness_split),
      median_seconds(measured, Phase::assemble), median_seconds(measured, Phase::verify));
  for (Phase phase : kernel_phases) costs += fmt::format("[gpu_phase_cost.{}]\nfixed_s = {}\n", trace::phase_name(phase), kernel_delay_s);
  const auto calibration = scratch.path() / "fake-device.toml";
  std::ofstream(calibration) << costs;
  Scenario scenario = parse_scenario_text(scenario_toml_for_run(run, {calibration}), "fake.toml", scratch.path()).base;
  // The copy's rate is below what a scenario file may state (98 kB in 0.1 s): set it here.
  scenario.hardware.pcie_h2d_gbps = double(scenario.workload.partition_abc_bytes()) / copy_delay_s / 1e9;
  return scenario;
}

std::string describe(const trace::Span& span) {
  return fmt::format("{} of partition {} on {} ({} bytes, {} items)", trace::phase_name(span.phase), span.partition,
                     span.resource, span.bytes, span.items);
}

// Spans grouped by `key`, each group in start order.
template <class Key>
std::map<Key, std::vector<trace::Span>> grouped(const trace::Trace& spans, Key (*key)(const trace::Span&)) {
  std::map<Key, std::vector<trace::Span>> groups;
  for (const trace::Span& span : spans) groups[key(span)].push_back(span);
  for (auto& [k, group] : groups)
    std::ranges::stable_sort(group, [](const trace::Span& a, const trace::Span& b) { return a.start_s < b.start_s; });
  return groups;
}
std::uint32_t partition_of(const trace::Span& span) { return span.partition; }
std::string resource_of(const trace::Span& span) { return span.resource; }

// Where the groups differ in what their spans did (phase, partition, resource, bytes, items).
template <class Key>
void compare_groups(const std::map<Key, std::vector<trace::Span>>& engine, const std::map<Key, std::vector<trace::Span>>& model,
                    const std::string& by, std::vector<std::string>& differences) {
  auto same = [](const trace::Span& a, const trace::Span& b) {
    return std::tie(a.phase, a.partition, a.resource, a.bytes, a.items) ==
           std::tie(b.phase, b.partition, b.resource, b.bytes, b.items);
  };
  for (const auto& [key, spans] : engine) {
    const auto found = model.find(key);
    const std::vector<trace::Span> none;
    const std::vector<trace::Span>& predicted = found == model.end() ? none : found->second;
    for (std::size_t i = 0; i < std::max(spans.size(), predicted.size()); ++i)
      if (i >= spans.size() || i >= predicted.size() || !same(spans[i], predicted[i])) {
        differences.push_back(fmt::format("{} {}, span {}: engine {}, model {}", by, key, i,
                                          i < spans.size() ? describe(spans[i]) : "none",
                                          i < predicted.size() ? describe(predicted[i]) : "none"));
        break;
      }
  }
  for (const auto& [key, spans] : model)
    if (!engine.contains(key)) differences.push_back(fmt::format("{} {}: the model's alone", by, key));
}

// The delay a span must last (0: none, its time is the host's).
double delay_of(const trace::Span& span) {
  if (trace::is_gpu_kernel(span)) return kernel_delay_s;
  return span.phase == Phase::h2d && span.items > 0 ? copy_delay_s : 0;
}

// Every way the model's spans differ from the engine's, one line each (empty: they agree).
std::vector<std::string> disagreements(const trace::Trace& engine, const trace::Trace& model) {
  std::vector<std::string> differences;
  compare_groups(grouped(engine, partition_of), grouped(model, partition_of), "partition", differences);
  compare_groups(grouped(engine, resource_of), grouped(model, resource_of), "resource", differences);
  for (const auto& [spans, source, slack_s] : {std::tuple{&engine, "engine", engine_slack_s}, {&model, "model", 1e-6}})
    for (const trace::Span& span : *spans)
      if (const double delay_s = delay_of(span); delay_s > 0) {
        const double seconds = span.end_s - span.start_s;
        if (seconds < delay_s - 1e-4 || seconds > delay_s + slack_s)
          differences.push_back(fmt::format("{}: {} lasts {:.6f} s, its delay {} s", source, describe(span), seconds, delay_s));
      }
  return differences;
}

class EngineAndModel : public ::testing::Test {
 protected:
  void SetUp() override { engine_ = trace::read_csv_file(engine_run().trace); }
  const testing::ScratchDirectory scratch_;
  trace::Trace engine_;
};

TEST_F(EngineAndModel, AgreeOnEverySpanWhereCostsAreDeterministic) {
  const Scenario scenario = scenario_of(engine_run(), scratch_);
  const std::vector<std::string> simgrid = disagreements(engine_, simulate(scenario).spans);
  EXPECT_TRUE(simgrid.empty()) << "SimGrid:\n" << fmt::format("{}", fmt::join(simgrid, "\n"));
  const std::vector<std::string> logical = disagreements(engine_, simulate_in_logical_time(scenario).spans);
  EXPECT_TRUE(logical.empty()) << "logical time:\n" << fmt::format("{}", fmt::join(logical, "\n"));
}

// The settings the engine's sidecar states come back, unchanged, in the sidecar of the model's run
// of that engine run: one vocabulary, carried through validate's scenario.
TEST_F(EngineAndModel, StateTheSameSettings) {
  const Scenario scenario = scenario_of(engine_run(), scratch_);
  const trace::RunSettings engine = engine_run().sidecar.settings;
  const trace::RunSettings model = simulation_sidecar(scenario, simulate_in_logical_time(scenario)).settings;
  EXPECT_EQ(nlohmann::json(model.job), nlohmann::json(engine.job));
  EXPECT_EQ(model.copies_staging, engine.copies_staging);
  EXPECT_EQ(model.synthesis_core_share, engine.synthesis_core_share);
  EXPECT_EQ(model.gpus, engine.gpus);
}

// The comparison fails where the model is wrong: a kernel costing more than the fake device's
// delay, and a witness whose scalars split otherwise.
TEST_F(EngineAndModel, DisagreeWhereTheModelsCostsOrShapeDiffer) {
  Scenario slower = scenario_of(engine_run(), scratch_);
  slower.calibration.gpu_phase_cost[Phase::msm_b2].fixed_s *= 1.5;
  const std::vector<std::string> slow = disagreements(engine_, simulate_in_logical_time(slower).spans);
  EXPECT_EQ(slow.size(), partitions) << fmt::format("{}", fmt::join(slow, "\n"));
  for (const std::string& line : slow) EXPECT_NE(line.find("model: msm_b2"), std::string::npos) << line;

  Scenario other_shape = scenario_of(engine_run(), scratch_);
  other_shape.workload.one_scalar_share /= 2;
  const std::vector<std::string> shape = disagreements(engine_, simulate_in_logical_time(other_shape).spans);
  ASSERT_FALSE(shape.empty());
  EXPECT_NE(shape.front().find("batch_add"), std::string::npos) << shape.front();
}

}  // namespace
}  // namespace zkpipe::model
