// Tests of the shared trace schema: CSV round trip, errors naming line and column, the summary
// on a hand-made trace, the Chrome trace export, and the sidecar's typed facts, old sidecars and
// errors naming the key.
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.hpp"
#include "trace/perfetto.hpp"
#include "trace/sidecar.hpp"
#include "trace/summary.hpp"
#include "trace/trace_csv.hpp"

namespace zkpipe::trace {
namespace {

Trace hand_made_trace() {
  // One GPU, compute busy 0.5 s of the 1 s between its first and last compute, 2 GB copied in 1 s.
  return {
      {"r", Source::measured, 0, Phase::synth, "cpu:0", 0.0, 2.0, 96, 1},
      {"r", Source::measured, 0, Phase::h2d, "pcie0:h2d", 2.0, 2.5, 1'000'000'000, 1, 0, 0},
      {"r", Source::measured, 0, Phase::ntt, "gpu0:w0", 2.5, 2.75, 0, 1, 0, 0},
      {"r", Source::measured, 0, Phase::assemble, "cpu:assemble", 2.75, 2.8, 0, 0},
      {"r", Source::measured, 1, Phase::wait_pool, "cpu:1", 0.0, 1.0, 0, 0},
      {"r", Source::measured, 1, Phase::h2d, "pcie0:h2d", 2.5, 3.0, 1'000'000'000, 1},
      {"r", Source::measured, 1, Phase::msm_h, "gpu0:w1", 3.25, 3.5, 0, 1},
      {"r", Source::measured, 1, Phase::verify, "cpu:assemble", 3.5, 4.0, 0, 0},
      {"r", Source::measured, 1, Phase::h2d, "pcie0:h2d", 3.0, 3.25, 4'000'000'000, 0},  // SRS bases
  };
}

TEST(TraceCsv, RoundTripsEveryField) {
  const Trace spans = hand_made_trace();
  const std::string text = to_csv(spans);
  const Trace read = read_csv_text("memory", text);
  ASSERT_EQ(read.size(), spans.size());
  EXPECT_EQ(to_csv(read), text);
  EXPECT_EQ(read[1].bytes, 1'000'000'000u);
  EXPECT_EQ(read[4].phase, Phase::wait_pool);
  EXPECT_EQ(read[0].source, Source::measured);
}

TEST(TraceCsv, RoundTripsAttemptAndWorkerAndReadsVersionOneWithoutThem) {
  const Trace read = read_csv_text("memory", to_csv(hand_made_trace()));
  EXPECT_EQ(read[1].attempt, 0u);
  EXPECT_EQ(read[1].worker, 0u);
  EXPECT_FALSE(read[0].attempt);
  EXPECT_FALSE(read[0].worker);
  const Trace version_one = read_csv_text(
      "v1.csv", "run,source,partition,phase,resource,start_s,end_s,bytes,items\nr,measured,3,h2d,pcie0:h2d,1.5,2.0,96,1\n");
  ASSERT_EQ(version_one.size(), 1u);
  EXPECT_EQ(version_one[0].partition, 3u);
  EXPECT_FALSE(version_one[0].attempt);
  EXPECT_FALSE(version_one[0].worker);
  try {
    read_csv_text("short.csv", "run,source,partition,phase,resource,start_s,end_s,bytes\n");
    FAIL() << "a trace without its items column was accepted";
  } catch (const TraceError& error) {
    EXPECT_NE(std::string(error.what()).find("no column items"), std::string::npos) << error.what();
  }
}

TEST(TraceCsv, NamesTheLineAndColumnOfBadInput) {
  const std::string text = std::string(csv_header) + "\nr,simulated,0,synth,cpu:0,0.0,1.0,10,1,0,\nr,simulated,1,warp,cpu:0,0,1,0,0,0,\n";
  try {
    read_csv_text("bad.csv", text);
    FAIL() << "an unknown phase was accepted";
  } catch (const TraceError& error) {
    EXPECT_NE(std::string(error.what()).find("bad.csv:3"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("phase"), std::string::npos) << error.what();
  }
  EXPECT_THROW(read_csv_text("header.csv", "a,b,c\n1,2,3\n"), TraceError);
}

TEST(TraceSummary, ComputesUtilizationBandwidthThroughputAndWaits) {
  const TraceSummary summary = summarize(hand_made_trace());
  EXPECT_DOUBLE_EQ(summary.makespan_s, 4.0);
  EXPECT_EQ(summary.partitions_completed, 2u);
  EXPECT_DOUBLE_EQ(summary.partitions_per_s, 0.5);
  EXPECT_DOUBLE_EQ(summary.gpu_utilization, 0.5);  // 0.5 s busy between 2.5 s and 3.5 s
  EXPECT_DOUBLE_EQ(summary.h2d_gbps, 2.0);  // a/b/c only: the SRS copy is not counted
  EXPECT_DOUBLE_EQ(summary.wait_pool_s, 1.0);
  EXPECT_DOUBLE_EQ(summary.wait_budget_s, 0.0);
  ASSERT_FALSE(summary.phases.empty());
  EXPECT_EQ(summary.phases.front().phase, Phase::synth);
}

// The one union of intervals (GPU utilization, the report's GPU busy bins): overlapping and
// touching intervals merge, empty ones go, the rest stay apart, in start order.
TEST(TraceSummary, TheUnionOfIntervalsIsDisjointAndInOrder) {
  EXPECT_EQ(interval_union({{3, 4}, {0, 1}, {0.5, 2}, {2, 2.5}, {5, 5}, {6, 5.5}}),
            (std::vector<std::pair<double, double>>{{0, 2.5}, {3, 4}}));
  EXPECT_TRUE(interval_union({}).empty());
}

TEST(TraceSummary, SpeaksOfTheDeviceTheWorkersComputedOn) {
  const TraceSummary summary = summarize(hand_made_trace());
  const std::string gpu = format_summary(summary);
  EXPECT_NE(gpu.find("GPU utilization      50.0 %"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("  gpu0 "), std::string::npos) << gpu;
  // the CPU backend proves on the host: its summary names the CPU and no GPU
  const std::string cpu = format_summary(summary, ComputeDevice::cpu);
  EXPECT_NE(cpu.find("CPU utilization      50.0 %"), std::string::npos) << cpu;
  EXPECT_EQ(cpu.find("gpu"), std::string::npos) << cpu;
  EXPECT_EQ(cpu.find("GPU"), std::string::npos) << cpu;
  const std::string fake = format_summary(summary, ComputeDevice::fake);
  EXPECT_NE(fake.find("fake device utilization 50.0 %"), std::string::npos) << fake;
  EXPECT_EQ(fake.find("gpu"), std::string::npos) << fake;
}

TEST(TraceExport, WritesOneCompleteEventPerSpanAndNamesThreads) {
  const nlohmann::json chrome = to_chrome_trace(hand_made_trace());
  std::size_t complete = 0, thread_names = 0;
  for (const auto& event : chrome["traceEvents"]) {
    complete += event["ph"] == "X";
    thread_names += event["name"] == "thread_name";
  }
  EXPECT_EQ(complete, hand_made_trace().size());
  EXPECT_EQ(thread_names, 6u);  // cpu:0 pcie0:h2d gpu0:w0 cpu:assemble cpu:1 gpu0:w1
}

TEST(TraceSidecar, RoundTripsThroughAFile) {
  model::testing::ScratchDirectory scratch;
  Sidecar sidecar;
  sidecar.source = Source::measured;
  sidecar.scenario = {.job = "dense", .partitions = 8, .variables = 1000004};
  sidecar.settings.job.staging = sidecar.settings.copies_staging = policy::Staging::pinned;
  sidecar.machine.pcie_h2d_gbps = 55.3;
  sidecar.versions = {{"zkpipe", "test"}};
  const auto path = sidecar_path_for(scratch.path() / "run.csv");
  EXPECT_EQ(path.filename(), "run.json");
  write_sidecar(path, sidecar);
  const Sidecar read = read_sidecar(path);
  EXPECT_EQ(read.source, Source::measured);
  EXPECT_EQ(read.scenario, sidecar.scenario);
  EXPECT_EQ(read.settings, sidecar.settings);
  EXPECT_EQ(read.machine, sidecar.machine);
  EXPECT_EQ(read.versions.at("zkpipe"), "test");
}

// Every fact round-trips through JSON; a fact left empty is no key at all.
TEST(TraceSidecar, MachineAndJobFactsRoundTripAndOmitWhatIsAbsent) {
  const MachineFacts machine{.cores = 16,
                             .available_memory_bytes = 134024798208,
                             .cuda_devices = 1,
                             .gpus = 2,
                             .host_memory_gbps = 150.0,
                             .copy_engines_h2d = 2,
                             .pcie_h2d_gbps = 54.6,
                             .idle_h2d_gbps = 6.8,
                             .idle_h2d_from = "pageable"};
  EXPECT_EQ(nlohmann::json(machine).get<MachineFacts>(), machine);
  EXPECT_EQ(nlohmann::json(MachineFacts{.cores = 4}), nlohmann::json::parse(R"({"cores": 4})"));
  const JobFacts job{.job = "cuzk",
                     .partitions = 2,
                     .constraints_per_partition = 130'000'000,
                     .lg_domain = 27,
                     .public_inputs = 70,
                     .variables = 130'000'071,
                     .partition_abc_bytes = 12'480'000'000,
                     .partition_witness_bytes = 4'160'002'272,
                     .proving_key_bytes = 47'000'000'000,
                     .worker_host_bytes = 9'000'000'000,
                     .jobs = 2,
                     .logs = std::vector<std::string>{"a.log", "b.log"},
                     .cuzk_partitions = nlohmann::json::parse(R"([{"partition": 0, "prep_msm_ms": 900}])"),
                     .scenario_file = nlohmann::json::parse(R"({"name": "seed", "workload": {"partitions": 2}})")};
  EXPECT_EQ(nlohmann::json(job).get<JobFacts>(), job);
  EXPECT_EQ(nlohmann::json(JobFacts{.job = "dense", .partitions = 8}),
            nlohmann::json::parse(R"({"job": "dense", "partitions": 8})"));
}

// The settings round-trip through JSON, each at the top level of "settings" (the job's beside what
// the run made of them), as scripts read them: settings.staging is the copies' memory.
TEST(TraceSidecar, RunSettingsRoundTrip) {
  RunSettings settings{.job = {.synthesis_threads = 16,
                               .partitions_in_flight = 18,
                               .staging = policy::Staging::pinned,
                               .pool_slabs = 4,
                               .host_budget_bytes = 100'000'000'000,
                               .srs_residency = policy::SrsResidency::pinned_host},
                       .copies_staging = policy::Staging::pageable,
                       .synthesis_core_share = policy::SynthesisCoreShare::pooled,
                       .gpus = 2,
                       .backend = "faulty-cuda",
                       .stage_alone = StageAlone::gpu,
                       .device_footprint = policy::DeviceFootprint{.key_bytes = 9, .fixed_bases = {{.table = {policy::KeyArray::b2}}}},
                       .device_bytes_planned = 24,
                       .fixed_base_tables = {{policy::KeyArray::a, 1}, {policy::KeyArray::h, 2}},
                       .outcome = RunOutcome{.proved = 7, .failed = 1, .wall_s = 2.5},
                       .seed = 3,
                       .injected_faults = nlohmann::json{{"seed", 5}}};
  const nlohmann::json json = settings;
  EXPECT_EQ(json.get<RunSettings>(), settings);
  EXPECT_EQ(json.at("staging"), "pageable");
  EXPECT_EQ(json.at("staging_requested"), "pinned");
  EXPECT_EQ(json.at("synthesis_threads"), 16);
  EXPECT_EQ(json.at("outcome").at("proved"), 7);
  nlohmann::json named = json;  // sidecars written before tables of two sets name the arrays
  named["fixed_base_tables"] = {"a", "h"};
  EXPECT_EQ(named.get<RunSettings>().fixed_base_tables,
            (std::vector<policy::FixedBaseTable>{{policy::KeyArray::a, 1}, {policy::KeyArray::h, 1}}));
}

// Sidecars older than a setting read as its default: one staging for both, no core-share rule
// (the engine's `threads`), a fake run's faults under "fake_device".
TEST(TraceSidecar, RunSettingsOfOlderSidecarsRead) {
  const auto settings = nlohmann::json::parse(R"({"staging": "pinned", "synthesis_threads": 8, "fake_device": {"seed": 2}})")
                            .get<RunSettings>();
  EXPECT_EQ(settings.copies_staging, policy::Staging::pinned);
  EXPECT_EQ(settings.job.staging, policy::Staging::pinned);
  EXPECT_EQ(settings.job.synthesis_threads, 8u);
  EXPECT_EQ(settings.synthesis_core_share, policy::SynthesisCoreShare::threads);
  EXPECT_EQ(settings.gpus, 1u);
  EXPECT_EQ(settings.stage_alone, StageAlone::none);
  EXPECT_EQ(settings.injected_faults, nlohmann::json({{"seed", 2}}));
  EXPECT_FALSE(nlohmann::json::object().get<RunSettings>().copies_staging);
}

// A sidecar the engine wrote before the facts were typed (schema 1) reads, its absent facts empty.
TEST(TraceSidecar, AnOldEngineSidecarReads) {
  const Sidecar sidecar = read_sidecar(model::testing::source_dir() /
                                       "scenarios/calibration/traces/staging-h200-20261129T1020/dense/pageable/trace.json");
  EXPECT_EQ(sidecar.source, Source::measured);
  EXPECT_EQ(sidecar.scenario.job, "dense");
  EXPECT_EQ(sidecar.scenario.partitions, 8u);
  EXPECT_EQ(sidecar.scenario.variables, 1000004u);
  EXPECT_EQ(sidecar.scenario.partition_abc_bytes, 100663296u);
  EXPECT_FALSE(sidecar.scenario.worker_host_bytes);
  EXPECT_EQ(sidecar.machine.cores, 16u);
  EXPECT_EQ(sidecar.machine.idle_h2d_from, "pinned");
  EXPECT_FALSE(sidecar.machine.idle_h2d_gbps);
  EXPECT_NEAR(sidecar.machine.pcie_h2d_gbps.value(), 54.56, 0.01);
}

// A simulation's sidecar before schema 3 held the scenario file itself where the job facts stand.
TEST(TraceSidecar, AnOldSimulatedSidecarKeepsItsScenarioFile) {
  const nlohmann::json file = nlohmann::json::parse(R"({"name": "seed", "workload": {"partitions": 8}})");
  const Sidecar sidecar = sidecar_from_json(
      {{"schema", "zkpipe-trace-sidecar/2"}, {"source", "simulated"}, {"scenario", file}, {"machine", {{"cores", 16}}}});
  EXPECT_EQ(sidecar.scenario.scenario_file, file);
  EXPECT_EQ(sidecar.machine.cores, 16u);
}

// A required fact missing, or a fact of the wrong type, is one error naming the file and the key.
TEST(TraceSidecar, AMissingOrMistypedFactIsAnErrorNamingTheFileAndKey) {
  model::testing::ScratchDirectory scratch;
  const auto path = scratch.path() / "trace.json";
  auto error_reading = [&](const nlohmann::json& json) {
    std::ofstream(path) << json.dump();
    try {
      read_sidecar(path);
    } catch (const TraceError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  Sidecar sidecar;
  sidecar.scenario = {.job = "dense", .partitions = 8};
  nlohmann::json json = to_json(sidecar);
  json["scenario"].erase("partitions");
  std::string message = error_reading(json);
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("no scenario.partitions"), std::string::npos) << message;
  json["scenario"]["partitions"] = 8;
  json["machine"]["cores"] = "sixteen";
  message = error_reading(json);
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("machine.cores"), std::string::npos) << message;
  json["machine"]["cores"] = 16;
  for (const auto& [key, value] : {std::pair{"staging", nlohmann::json("pinnd")}, {"synthesis_core_share", nlohmann::json(2)},
                                   {"gpus", nlohmann::json(-1)}, {"fixed_base_tables", nlohmann::json({"z"})},
                                   {"outcome", nlohmann::json({{"proved", "all"}})}}) {
    json["settings"] = {{key, value}};
    message = error_reading(json);
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("settings.") + key), std::string::npos) << message;
  }
}

// A count holds an integer in its type's range: a fraction, a float past every integer, a negative
// count or one past 32 bits is an error naming the key and the value, never a wrapped count.
TEST(TraceSidecar, ACountOutsideItsTypeIsAnErrorNamingTheKeyAndValue) {
  model::testing::ScratchDirectory scratch;
  const auto path = scratch.path() / "trace.json";
  Sidecar sidecar;
  sidecar.scenario = {.job = "dense", .partitions = 8};
  for (const nlohmann::json& partitions :
       {nlohmann::json(2.5), nlohmann::json(5.35556e+67), nlohmann::json(-1), nlohmann::json(5'000'000'000)}) {
    nlohmann::json json = to_json(sidecar);
    json["scenario"]["partitions"] = partitions;
    std::ofstream(path) << json.dump();
    try {
      read_sidecar(path);
      ADD_FAILURE() << "partitions " << partitions.dump() << " was read";
    } catch (const TraceError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("scenario.partitions"), std::string::npos) << message;
      EXPECT_NE(message.find(partitions.dump()), std::string::npos) << message;
    }
  }
  nlohmann::json json = to_json(sidecar);
  json["scenario"]["partitions"] = std::numeric_limits<std::uint32_t>::max();
  std::ofstream(path) << json.dump();
  EXPECT_EQ(read_sidecar(path).scenario.partitions, std::numeric_limits<std::uint32_t>::max());
}

}  // namespace
}  // namespace zkpipe::trace
