// Tests of `zkpipe import cuzk`: the line parser (each format as cuzk's sources write it, ANSI
// colours, torn and partial lines), the attribution and layout of one call's CUZK lines, two
// interleaved workers (the fixture of tests/model/fixtures/cuzk, made by its make_fixtures.py,
// against the mutex sections it records), several GPUs' sections, bad input, and the fixture
// imported, calibrated and simulated end to end through the command line.
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cuzk_import.hpp"
#include "run_zkpipe.hpp"
#include "test_support.hpp"
#include "trace/invariants.hpp"
#include "trace/summary.hpp"
#include "trace/trace_csv.hpp"

namespace zkpipe::model::cuzk {
namespace {

const std::filesystem::path fixtures = testing::source_dir() / "tests/model/fixtures/cuzk";

std::string read_text(const std::filesystem::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// Every record the reader makes of `text`, in order.
std::vector<Record> records_of(std::string_view text, LineCounts* counts = nullptr) {
  std::vector<Record> records;
  LogReader reader([&](const Record& record) {
    records.push_back(record);
    return Disposition::used;
  });
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    reader.read_line(text.substr(0, newline), newline != std::string_view::npos);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
  }
  reader.end_of_file();
  if (counts) *counts = reader.counts();
  return records;
}

TEST(CuzkLog, ReadsEachLineKindAsCuzksSourcesWriteIt) {
  const auto end = parse_timeline("TIMELINE,13043,GPU_END,c3a7b2e9-1d4f,worker=1,partition=4,gpu_ms=2001");
  ASSERT_TRUE(end);
  EXPECT_EQ(end->offset_ms, 13043);
  EXPECT_EQ(end->event, "GPU_END");
  EXPECT_EQ(end->job_id, "c3a7b2e9-1d4f");
  EXPECT_EQ(end->detail, (std::map<std::string, std::string>{{"worker", "1"}, {"partition", "4"}, {"gpu_ms", "2001"}}));
  EXPECT_TRUE(parse_timeline("TIMELINE,5,GPU_QUEUE,job,monolithic")->detail.contains("monolithic"));

  const auto ntt_h = parse_kernel_timing(
      "CUZK_NTT_H: d_b_alloc=700ms ntt_kernels=300ms coset_intt_sync=100ms msm_init=1ms msm_invoke=250ms msm_dtor=0ms total=1351ms");
  ASSERT_TRUE(ntt_h);
  EXPECT_TRUE(ntt_h->ntt_h);
  EXPECT_EQ(ntt_h->values.at("d_b_alloc"), 700);
  EXPECT_EQ(ntt_h->values.at("total"), 1351);
  EXPECT_EQ(parse_kernel_timing("CUZK_TIMING: gpu_tid=0 tail_msm_ms=80 gpu_total_ms=1300")->values.at("tail_msm_ms"), 80);
  EXPECT_EQ(parse_kernel_timing("CUZK_TIMING: d_a_cache allocated 4096 MiB on gpu 0")->text, "d_a_cache allocated 4096 MiB on gpu 0");

  const std::string plain =
      "2026-12-01T10:00:04.665301Z  INFO cuzk_core::engine: GPU_TIMING spawn_blocking prove_start worker_id=0 "
      "partition=Some(2) spawn_to_enter_ms=1 prove_start_ms=1655";
  const std::string ansi =
      "\x1b[2m2026-12-01T10:00:04.665301Z\x1b[0m \x1b[32m INFO\x1b[0m \x1b[2mcuzk_core::engine\x1b[0m\x1b[2m:\x1b[0m "
      "GPU_TIMING spawn_blocking prove_start \x1b[3mworker_id\x1b[0m\x1b[2m=\x1b[0m0 \x1b[3mpartition\x1b[0m\x1b[2m=\x1b[0mSome(2) "
      "\x1b[3mspawn_to_enter_ms\x1b[0m\x1b[2m=\x1b[0m1 \x1b[3mprove_start_ms\x1b[0m\x1b[2m=\x1b[0m1655";
  EXPECT_EQ(without_ansi_escapes(ansi), plain);
  const auto spawn = parse_tracing(plain);
  ASSERT_TRUE(spawn);
  EXPECT_EQ(spawn->message, "GPU_TIMING spawn_blocking prove_start");
  EXPECT_EQ(spawn->fields.at("partition"), "Some(2)");
  EXPECT_EQ(spawn->fields.at("spawn_to_enter_ms"), "1");
  // A span's fields before the target are not the event's.
  const auto hot = parse_tracing(
      "2026-12-01T10:00:03.007433Z  INFO gpu_worker{worker_id=0 gpu=0 job_id=j partition=Some(2)}: cuzk_core::engine: "
      "GPU_TIMING hot_path pre-prove overhead worker_id=0 partition=Some(2) total_overhead_ms=1");
  ASSERT_TRUE(hot);
  EXPECT_EQ(hot->message, "GPU_TIMING");
  EXPECT_FALSE(parse_tracing("2026-12-01T10:00:00.000000Z  INFO cuzk_daemon: cuzk-daemon starting"));
}

TEST(CuzkLog, RejoinsTimelineLinesTornByOtherThreadsLines) {
  LineCounts counts;
  const auto records = records_of(
      "TIMELINE,3008,GPU_STARTCUZK_TIMING: prep_msm_ms=912\n"
      ",job-a,worker=0,partition=2\n"
      "TIMELINE,3010,GPU_END\x1b[2m2026-12-01T10:00:03.010000Z\x1b[0m \x1b[32m INFO\x1b[0m x: FIN_TIMING finalizer partition\n"
      ",job-b,2026-12-01T10:00:03.010100Z  INFO cuzk_core::engine: pipeline GPU worker started worker_id=1 gpu=0 sub_id=1\n"
      "worker=1,gpu_ms=1500\n",
      &counts);
  ASSERT_EQ(records.size(), 5u);
  EXPECT_TRUE(std::holds_alternative<KernelTimingRecord>(records[0]));
  const auto& start = std::get<TimelineRecord>(records[1]);
  EXPECT_EQ(start.event, "GPU_START");
  EXPECT_EQ(start.job_id, "job-a");
  EXPECT_EQ(start.detail.at("partition"), "2");
  EXPECT_EQ(std::get<TracingRecord>(records[2]).message, "FIN_TIMING");
  EXPECT_EQ(std::get<TracingRecord>(records[3]).fields.at("sub_id"), "1");
  const auto& end = std::get<TimelineRecord>(records[4]);
  EXPECT_EQ(end.job_id, "job-b");
  EXPECT_EQ(end.detail.at("gpu_ms"), "1500");
  EXPECT_EQ(counts.torn_rejoined, 2u);
  EXPECT_EQ(counts.torn_dropped, 0u);
  EXPECT_EQ(counts.read, 5u);
}

TEST(CuzkLog, DropsTornPiecesThatMakeNoLineMalformedLinesAndACutOffLastLine) {
  LineCounts counts;
  const auto records = records_of(
      "TIMELINE,1,SYNTH_STARTCUZK_TIMING: async_dealloc_ms=2\n"
      "TIMELINE,2,SYNTH_START,job,partition=1\n"  // the head's rest never came
      "TIMELINE,3,GPU_PICKUPCUZK_TIMING: async_dealloc_ms=2\n"
      "not the rest of it\n"
      "TIMELINE,x,GPU_START,job,worker=0\n"
      "CUZK_TIMING: prep_msm_ms=12a\n"
      "an unrelated line\n"
      "\n"
      "TIMELINE,9,GPU_END,job,worker=0,gpu_ms=12",
      &counts);
  EXPECT_EQ(records.size(), 3u);  // two async_dealloc lines and the whole SYNTH_START
  EXPECT_EQ(counts.torn_dropped, 3u);
  EXPECT_EQ(counts.malformed, 2u);
  EXPECT_EQ(counts.other, 2u);
  EXPECT_EQ(counts.partial, 1u);
  EXPECT_EQ(counts.read, 9u);
}

// One partition's lines, as one worker's call prints them (cuzk_log.hpp), with round figures.
constexpr std::string_view one_call = R"(TIMELINE,0,SYNTH_START,job,partition=0
TIMELINE,1000,SYNTH_END,job,partition=0,synth_ms=999
TIMELINE,1000,GPU_QUEUE,job,partition=0
TIMELINE,1000,GPU_PICKUP,job,worker=0,partition=0
TIMELINE,1001,GPU_START,job,worker=0,partition=0
CUZK_TIMING: split_vectors_ms=10 setup_to_split_ms=12
CUZK_TIMING: pre_lock_cpu_ms=15 mutex_wait_ms=0
CUZK_NTT_H: d_b_alloc=2ms ntt_kernels=300ms coset_intt_sync=100ms msm_init=1ms msm_invoke=250ms msm_dtor=1ms total=654ms
CUZK_TIMING: gpu_tid=0 ntt_msm_h_ms=655
CUZK_TIMING: prep_msm_ms=900
CUZK_TIMING: gpu_tid=0 barrier_wait_ms=200
CUZK_TIMING: gpu_tid=0 batch_add_ms=200
CUZK_TIMING: gpu_tid=0 tail_msm_ms=80 gpu_total_ms=1135
CUZK_TIMING: mutex_held_ms=1136 total_start_fn_ms=1151
CUZK_TIMING: b_g2_msm_ms=400 num_circuits=1
TIMELINE,2320,GPU_END,job,worker=0,partition=0,gpu_ms=1319
)";

const trace::Span& only(const trace::Trace& spans, trace::Phase phase) {
  const auto found = std::ranges::find(spans, phase, &trace::Span::phase);
  EXPECT_NE(found, spans.end()) << trace::phase_name(phase);
  EXPECT_EQ(std::ranges::count(spans, phase, &trace::Span::phase), 1) << trace::phase_name(phase);
  return *found;
}

void expect_span(const trace::Span& span, std::string_view resource, double start_s, double end_s) {
  EXPECT_EQ(span.resource, resource) << trace::phase_name(span.phase);
  EXPECT_NEAR(span.start_s, start_s, 1e-9) << trace::phase_name(span.phase);
  EXPECT_NEAR(span.end_s, end_s, 1e-9) << trace::phase_name(span.phase);
}

TEST(CuzkImport, LaysOutOneCallsPhasesFromItsLines) {
  ImportOptions options;
  options.constraints = 1000;
  const ImportResult result = import_texts({one_call}, options);
  const trace::Trace& spans = result.spans;
  ASSERT_EQ(spans.size(), 8u);
  expect_span(only(spans, trace::Phase::synth), "cpu:0", 0, 1.000);
  EXPECT_EQ(only(spans, trace::Phase::synth).items, 1000u);
  EXPECT_EQ(only(spans, trace::Phase::synth).bytes, 96'000u);
  // pickup .. GPU_START + pre_lock_cpu_ms; the mutex held at once
  expect_span(only(spans, trace::Phase::witness_split), "cpu:gpu0w0", 1.000, 1.016);
  expect_span(only(spans, trace::Phase::ntt), "gpu0:w0", 1.018, 1.418);    // after d_b_alloc
  expect_span(only(spans, trace::Phase::msm_h), "gpu0:w0", 1.419, 1.669);  // after msm_init
  // the barrier starts after ntt_msm_h_ms (1.016 + 0.655) and lasts 0.200
  expect_span(only(spans, trace::Phase::batch_add), "gpu0:w0", 1.871, 2.071);
  expect_span(only(spans, trace::Phase::tail_msm), "gpu0:w0", 2.071, 2.151);
  // on the CPU after setup_to_split_ms and prep_msm_ms
  expect_span(only(spans, trace::Phase::msm_b2), "cpu:gpu0w0", 1.913, 2.313);
  EXPECT_FALSE(trace::is_gpu_kernel(only(spans, trace::Phase::msm_b2)));
  expect_span(only(spans, trace::Phase::assemble), "cpu:gpu0w0", 2.313, 2.320);  // b_g2 ended after the release
  for (const trace::Span& span : spans) {
    EXPECT_EQ(span.attempt, 0u);
    EXPECT_EQ(span.worker, span.phase == trace::Phase::synth ? std::nullopt : std::optional<std::uint32_t>(0));
  }
  EXPECT_NEAR(result.stats.kernel_busy_s, 0.400 + 0.250 + 0.200 + 0.080, 1e-9);
  EXPECT_NEAR(result.stats.cuzk_gpu_s, 1.319, 1e-9);
  EXPECT_EQ(result.lines.used, 16u);
  EXPECT_EQ(result.sidecar.settings.copies_staging, policy::Staging::pageable);  // no pinned synthesis line
  EXPECT_EQ(result.sidecar.scenario.cuzk_partitions->at(0).at("prep_msm_ms"), 900);
  EXPECT_TRUE(trace::check_invariants(spans, {1, 1, 0, 0, 0, std::nullopt, 1, false}).empty());
}

TEST(CuzkImport, AMonolithicJobIsOnePartitionAndItsSpawnLineIsMatched) {
  std::string log(one_call);
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"SYNTH_START,job,partition=0", "SYNTH_START,job,kind=winning-post"},
                                 {"SYNTH_END,job,partition=0,", "SYNTH_END,job,"},
                                 {"GPU_QUEUE,job,partition=0", "GPU_QUEUE,job,monolithic"},
                                 {"worker=0,partition=0", "worker=0"},
                                 {"worker=0,partition=0", "worker=0"},
                                 {"worker=0,partition=0,", "worker=0,"}})
    log.replace(log.find(from), from.size(), to);
  log += "2026-12-01T10:00:02.153000Z  INFO cuzk_core::engine: GPU_TIMING spawn_blocking prove_start worker_id=0 "
         "partition=None spawn_to_enter_ms=4 prove_start_ms=1151\n";
  const ImportResult result = import_texts({log}, {});
  EXPECT_EQ(result.stats.partitions, 1u);
  EXPECT_EQ(result.sidecar.scenario.cuzk_partitions->at(0).at("cuzk_partition"), nullptr);
  expect_span(only(result.spans, trace::Phase::witness_split), "cpu:gpu0w0", 1.000, 1.020);  // entered 4 ms later
  EXPECT_EQ(result.lines.unattributed, 0u);
  EXPECT_NE(format_import_summary(result).find("synthesis spans carry no constraints"), std::string::npos);
}

TEST(CuzkImport, SectionsOpenAtOnceAreOfSeveralGpusAndGetNoKernelSpans) {
  const ImportResult result = import_texts({R"(TIMELINE,0,GPU_START,a,worker=0,partition=0
TIMELINE,0,GPU_START,b,worker=1,partition=0
CUZK_TIMING: split_vectors_ms=1 setup_to_split_ms=1
CUZK_TIMING: split_vectors_ms=1 setup_to_split_ms=1
CUZK_TIMING: pre_lock_cpu_ms=2 mutex_wait_ms=0
CUZK_TIMING: pre_lock_cpu_ms=2 mutex_wait_ms=0
CUZK_NTT_H: d_b_alloc=0ms ntt_kernels=3ms coset_intt_sync=1ms msm_init=0ms msm_invoke=2ms msm_dtor=0ms total=6ms
CUZK_TIMING: mutex_held_ms=9 total_start_fn_ms=11
TIMELINE,20,SYNTH_START,c,partition=0
TIMELINE,30,SYNTH_END,c,partition=0,synth_ms=10
)"},
                                           {});
  EXPECT_EQ(result.stats.calls_with_kernels, 0u);
  ASSERT_EQ(result.stats.calls_without_kernels.size(), 1u);
  EXPECT_EQ(result.stats.calls_without_kernels.begin()->second, 2u);
  EXPECT_NE(result.stats.calls_without_kernels.begin()->first.find("several GPUs"), std::string::npos);
  EXPECT_EQ(result.lines.unattributed, 2u);  // the NTT line and the release, of either section
  EXPECT_EQ(result.spans.size(), 1u);        // the synthesis
}

TEST(CuzkImport, LogsWithoutCuzkLinesOrWithoutASpanAreClearErrors) {
  ImportOptions options;
  options.sources = {"daemon.log"};
  try {
    import_texts({"2026-12-01T10:00:00.000000Z  INFO cuzk_daemon: cuzk-daemon starting\nhello\n"}, options);
    FAIL() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("daemon.log: no cuzk lines among 2 lines"), std::string::npos) << error.what();
  }
  EXPECT_THROW(import_texts({"TIMELINE,5,GPU_QUEUE,job,partition=1\n"}, options), std::runtime_error);
}

struct Section {
  std::string job_id;
  std::uint32_t partition = 0, worker = 0;
  double held_ms = 0, released_ms = 0;
};

// sections.csv: job_id,partition,worker,held_ms,released_ms after its header.
std::vector<Section> fixture_sections() {
  std::ifstream in(fixtures / "sections.csv");
  std::string line;
  std::getline(in, line);
  std::vector<Section> sections;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    Section s;
    std::string field;
    std::getline(fields, s.job_id, ',');
    std::getline(fields, field, ',');
    s.partition = std::uint32_t(std::stoul(field));
    std::getline(fields, field, ',');
    s.worker = std::uint32_t(std::stoul(field));
    std::getline(fields, field, ',');
    s.held_ms = std::stod(field);
    std::getline(fields, field, ',');
    s.released_ms = std::stod(field);
    sections.push_back(s);
  }
  return sections;
}

// Each GPU call's kernels lie in the mutex section the fixture's generator recorded for it, on its
// worker, and the first begins when the mutex was taken (after the first call's d_b_alloc).
void expect_the_fixtures_sections(const ImportResult& result) {
  const std::vector<Section> sections = fixture_sections();
  ASSERT_EQ(sections.size(), 10u);
  const auto& partitions = result.sidecar.scenario.cuzk_partitions.value();
  for (const Section& section : sections) {
    const auto entry = std::ranges::find_if(partitions, [&](const nlohmann::json& p) {
      return p.at("job_id") == section.job_id && p.at("cuzk_partition") == section.partition;
    });
    ASSERT_NE(entry, partitions.end());
    const std::uint32_t partition = entry->at("partition");
    std::vector<const trace::Span*> kernels;
    for (const trace::Span& span : result.spans)
      if (span.partition == partition && trace::is_gpu_kernel(span)) kernels.push_back(&span);
    ASSERT_EQ(kernels.size(), 4u) << section.job_id << " " << section.partition;
    const double d_b_alloc_ms = section.held_ms == sections.front().held_ms ? 700 : 0;
    EXPECT_NEAR(kernels.front()->start_s, (section.held_ms + d_b_alloc_ms) / 1e3, 1e-9) << section.partition;
    EXPECT_NEAR(kernels.back()->end_s, section.released_ms / 1e3, 1e-9) << section.partition;
    EXPECT_EQ(kernels.front()->resource, fmt::format("gpu0:w{}", section.worker));
    EXPECT_EQ(entry->at("worker"), section.worker);
  }
}

TEST(CuzkImport, TwoInterleavedWorkersFromOneMergedLogOrFromStderrAndAColouredStdout) {
  const ImportResult merged = import_logs({fixtures / "merged.log"}, {});
  const ImportResult apart = import_logs({fixtures / "stderr.log", fixtures / "stdout-ansi.log"}, {});
  EXPECT_EQ(trace::to_csv(merged.spans), trace::to_csv(apart.spans));
  EXPECT_EQ(merged.lines.torn_rejoined, 5u);
  EXPECT_EQ(merged.lines.partial, 1u);
  EXPECT_EQ(merged.lines.malformed + merged.lines.unattributed + merged.lines.torn_dropped, 0u);
  EXPECT_EQ(apart.lines.torn_rejoined + apart.lines.partial, 0u);
  EXPECT_EQ(merged.lines.used, apart.lines.used);
  EXPECT_EQ(merged.stats.calls_with_kernels, 10u);
  EXPECT_EQ(merged.stats.workers_per_gpu, 2u);
  EXPECT_EQ(merged.stats.synthesis_lanes, 4u);
  EXPECT_EQ(merged.stats.constraints, 130023424u);
  EXPECT_EQ(merged.sidecar.settings.copies_staging, policy::Staging::pinned);
  EXPECT_EQ(merged.stats.sections_shifted_ms_max, 0);
  expect_the_fixtures_sections(merged);
  const auto violations = trace::check_invariants(merged.spans, {10, 10, 0, 0, 0, std::nullopt, 1, false});
  EXPECT_TRUE(violations.empty()) << trace::format_violations(violations);
  // cuzk's gpu_ms (GPU_START..GPU_END) claims more than the kernels did
  EXPECT_GT(merged.stats.cuzk_gpu_s, 1.5 * merged.stats.kernel_busy_s);
  EXPECT_GT(merged.stats.timeline_gpu_utilization, merged.stats.kernel_gpu_utilization);
}

using testing::run_zkpipe;

double toml_number(const std::string& text, const std::string& table, const std::string& key) {
  const std::size_t at = text.find(fmt::format("{} = ", key), text.find(fmt::format("[{}]", table)));
  EXPECT_NE(at, std::string::npos) << table << "." << key << " in\n" << text;
  return at == std::string::npos ? 0 : std::stod(text.substr(at + key.size() + 3));
}

TEST(CuzkImport, AFixtureImportedCalibratedAndSimulatedEndToEnd) {
  testing::ScratchDirectory scratch;
  const auto dir = scratch.path();
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_zkpipe({"import", "cuzk", (fixtures / "merged.log").string(), "-o", (dir / "cuzk").string(), "--cores", "32"}), 0);
  const std::string imported = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(imported.find("257 lines read"), std::string::npos) << imported;
  EXPECT_NE(imported.find("5 torn TIMELINE lines rejoined"), std::string::npos) << imported;
  EXPECT_NE(imported.find("1 partial"), std::string::npos) << imported;
  EXPECT_NE(imported.find("10 partitions of 2 jobs; 10 GPU calls, 10 with their kernel phases"), std::string::npos) << imported;

  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_zkpipe({"calibrate", (dir / "cuzk/trace.csv").string(), "-o", (dir / "cuzk.toml").string()}), 0);
  const std::string fits = ::testing::internal::GetCapturedStdout();
  const std::string calibration = read_text(dir / "cuzk.toml");
  std::cout << fits << calibration;
  // the generator's means (make_fixtures.py): ntt 320 + 100 ms, msm_h 250, batch_add 650, tail_msm 83
  EXPECT_NEAR(toml_number(calibration, "gpu_phase_cost.ntt", "fixed_s"), 0.420, 0.010);
  EXPECT_NEAR(toml_number(calibration, "gpu_phase_cost.msm_h", "fixed_s"), 0.250, 0.010);
  EXPECT_NEAR(toml_number(calibration, "gpu_phase_cost.batch_add", "fixed_s"), 0.650, 0.010);
  EXPECT_NEAR(toml_number(calibration, "gpu_phase_cost.tail_msm", "fixed_s"), 0.083, 0.005);
  EXPECT_EQ(calibration.find("gpu_phase_cost.msm_b2"), std::string::npos) << "b_g2 runs on the CPU";
  // 6 s a synthesis, four at a time (three others running)
  const double synthesis_s = toml_number(calibration, "synthesis", "core_s_per_mconstraint") * 130.023424 *
                             (1 + 3 * toml_number(calibration, "synthesis", "slowdown_per_extra_thread"));
  EXPECT_NEAR(synthesis_s, 6.0, 0.3) << calibration;
  EXPECT_NEAR(toml_number(calibration, "cpu", "witness_split_s"), 0.0165, 0.001);  // pickup + 1 + spawn + 15 ms

  std::ofstream(dir / "cuzk-host.toml") << fmt::format(R"(name = "cuzk-host"
calibration = ["{}", "cuzk.toml"]

[hardware]
cores = 32
gpus = 1

[workload]
partitions = 10
constraints_per_partition = 130023424
bytes_per_constraint = 1  # cuzk's uploads of a/b/c are inside its ntt_kernels time

[policy]
synthesis_threads = 4
partitions_in_flight = 10
staging = "pinned"
pool_slabs = 10
host_budget_gib = 1024
workers_per_gpu = 2
)",
                                                      (testing::source_dir() / "scenarios/calibration/h200-h2d.toml").string());
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_zkpipe({"simulate", (dir / "cuzk-host.toml").string(), "-o", (dir / "simulated.csv").string()}), 0);
  ASSERT_EQ(run_zkpipe({"report", (dir / "cuzk/trace.csv").string(), "--simulated", (dir / "simulated.csv").string(),
                        "-o", (dir / "report.html").string()}),
            0);
  std::cout << ::testing::internal::GetCapturedStdout();
  const trace::TraceSummary measured = trace::summarize(trace::read_csv_file(dir / "cuzk/trace.csv"));
  const trace::TraceSummary simulated = trace::summarize(trace::read_csv_file(dir / "simulated.csv"));
  EXPECT_EQ(measured.partitions_completed, 10u);
  EXPECT_EQ(simulated.partitions_completed, 10u);
  EXPECT_NEAR(simulated.partitions_per_s, measured.partitions_per_s, 0.1 * measured.partitions_per_s);
  EXPECT_NEAR(simulated.gpu_utilization, measured.gpu_utilization, 0.1);
  const std::string html = read_text(dir / "report.html");
  for (const char* part : {"\"comparison\":[{", "echarts.init"})  // the import beside its simulation, drawn by ECharts
    EXPECT_NE(html.find(part), std::string::npos) << part;
}

TEST(CuzkImport, ACommandLineErrorIsOneLine) {
  testing::ScratchDirectory scratch;
  std::ofstream(scratch.path() / "other.log") << "hello\n";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_zkpipe({"import", "cuzk", (scratch.path() / "other.log").string(), "-o", (scratch.path() / "out").string()}), 1);
  const std::string error = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(error.find("zkpipe import cuzk: "), 0u) << error;
  EXPECT_NE(error.find("no cuzk lines"), std::string::npos) << error;
  EXPECT_EQ(std::ranges::count(error, '\n'), 1) << error;
  EXPECT_FALSE(std::filesystem::exists(scratch.path() / "out"));
}

}  // namespace
}  // namespace zkpipe::model::cuzk
