// Tests of the HTML report's figures (report_data) and page: copies at their true rate, GPU busy as
// the union of kernels, waits as a step function, seconds per partition per phase, the validation
// table, the heatmap's measured points, and a self-contained page. That the page draws in a
// browser is the CTest report_in_chromium (tools/report/check_report.mjs).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "report.hpp"
#include "scenario.hpp"
#include "simulation.hpp"
#include "test_support.hpp"

namespace zkpipe::model {
namespace {

using trace::Phase;

trace::Span span(Phase phase, const char* resource, double start_s, double end_s, std::uint32_t partition = 0,
                 std::uint64_t bytes = 0, std::uint64_t items = 0) {
  return {"r", trace::Source::measured, partition, phase, resource, start_s, end_s, bytes, items};
}

nlohmann::json data_of(trace::Trace spans) {
  ReportInputs inputs;
  inputs.runs.push_back({"measured: r", std::move(spans)});
  return report_data(inputs);
}

// 1.61 GB of a/b/c in 30 ms is 53.7 GB/s, whatever else the run did around it; the witness upload
// (no items) is its own kind.
TEST(Report, EveryCopyIsDrawnAtItsBytesOverItsDuration) {
  const nlohmann::json data = data_of({span(Phase::synth, "cpu:0", 10, 14.6), span(Phase::h2d, "pcie0:h2d", 14.6, 14.63, 0, 1610612736, 16752274),
                                       span(Phase::h2d, "pcie0:h2d", 14.9, 14.96, 0, 535746560, 0),
                                       span(Phase::ntt, "gpu0:w0", 14.96, 15.0), span(Phase::assemble, "cpu:gpu0w0", 15.0, 18.0)});
  const nlohmann::json& copies = data["runs"][0]["copies"];
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_NEAR(copies[0][0].get<double>(), 4.6, 1e-9);  // from the run's first span
  EXPECT_NEAR(copies[0][1].get<double>(), 4.63, 1e-9);
  EXPECT_NEAR(copies[0][2].get<double>(), 1610612736 / 0.03 / 1e9, 1e-6);
  EXPECT_EQ(copies[0][3], 0);
  EXPECT_NEAR(copies[1][2].get<double>(), 535746560 / 0.06 / 1e9, 1e-6);
  EXPECT_EQ(copies[1][3], 1);
}

// Two overlapping kernels from 0 to 1 s of a 2 s run: busy 1 in every bin of the first half, 0
// after, and overlap is not counted twice.
TEST(Report, GpuBusyIsTheUnionOfItsKernelsPerBin) {
  const nlohmann::json data = data_of({span(Phase::ntt, "gpu0:w0", 0, 0.6), span(Phase::msm_h, "gpu0:w1", 0.4, 1.0),
                                       span(Phase::synth, "cpu:0", 0, 2.0)});
  const nlohmann::json& gpus = data["runs"][0]["gpu_busy"]["gpus"];
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]["gpu"], "gpu0");
  const auto busy = gpus[0]["busy"].get<std::vector<double>>();
  const std::size_t bins = data["gpu_busy_bins"].get<std::size_t>();
  ASSERT_EQ(busy.size(), bins);
  for (std::size_t bin = 0; bin < bins; ++bin) EXPECT_NEAR(busy[bin], bin < bins / 2 ? 1.0 : 0.0, 1e-9) << bin;
}

TEST(Report, WaitsOnThePoolAreAStepFunctionOfPartitionsWaiting) {
  const nlohmann::json data = data_of({span(Phase::wait_pool, "cpu:0", 0, 1, 0), span(Phase::wait_pool, "cpu:1", 0.5, 1.5, 1),
                                       span(Phase::synth, "cpu:0", 1, 3, 0)});
  const nlohmann::json expected = nlohmann::json::parse("[[0,0],[0,1],[0.5,2],[1,1],[1.5,0],[3,0]]");
  EXPECT_EQ(data["runs"][0]["waiting"]["wait_pool"], expected);
  EXPECT_EQ(data["runs"][0]["waiting"]["wait_budget"], nlohmann::json::parse("[[0,0],[3,0]]"));
}

TEST(Report, ThePhaseBreakdownIsSecondsPerPartition) {
  const nlohmann::json data = data_of({span(Phase::ntt, "gpu0:w0", 0, 0.1, 0), span(Phase::ntt, "gpu0:w0", 0.1, 0.4, 1),
                                       span(Phase::synth, "cpu:0", 0, 0.5, 0)});
  const nlohmann::json& phases = data["runs"][0]["phases"];
  const auto ntt = std::ranges::find_if(phases, [](const nlohmann::json& p) { return p["phase"] == std::size_t(Phase::ntt); });
  ASSERT_NE(ntt, phases.end());
  EXPECT_EQ((*ntt)["partitions"], 2);
  EXPECT_NEAR((*ntt)["per_partition_s"].get<double>(), 0.2, 1e-12);
}

// A measured run beside its simulation: the comparison is computed; one run alone has none.
TEST(Report, TwoRunsAreComparedMeasuredAgainstSimulated) {
  const Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  ReportInputs inputs;
  inputs.runs.push_back({"simulated: small", simulate(scenario).spans});
  EXPECT_TRUE(report_data(inputs)["comparison"].is_null());
  inputs.runs.push_back(inputs.runs.front());
  const nlohmann::json data = report_data(inputs);
  ASSERT_TRUE(data["comparison"].is_array());
  const auto utilization = std::ranges::find_if(data["comparison"], [](const nlohmann::json& row) { return row["metric"] == "gpu_utilization"; });
  ASSERT_NE(utilization, data["comparison"].end());
  EXPECT_EQ((*utilization)["error"], 0.0);
  EXPECT_EQ((*utilization)["unit"], "points");
  EXPECT_EQ(data["runs"].size(), 2u);
  EXPECT_FALSE(data["runs"][1]["timeline"]["lanes"].empty());
}

TEST(Report, TheValidationTableIsReadFromValidateMarkdown) {
  ReportInputs inputs;
  inputs.runs.push_back({"measured: r", {span(Phase::synth, "cpu:0", 0, 1)}});
  inputs.validation_markdown = "Calibrated on 1 run(s): a\n\n| point | measured | simulated |\n|---|---:|---:|\n"
                               "| p/a | 1.0 | 1.1 |\n| p/b | 2.0 | 1.9 |\n\nmean |throughput error| 7 %\n";
  const nlohmann::json validation = report_data(inputs)["validation"];
  EXPECT_EQ(validation["header"], nlohmann::json::parse(R"(["point","measured","simulated"])"));
  EXPECT_EQ(validation["rows"], nlohmann::json::parse(R"([["p/a","1.0","1.1"],["p/b","2.0","1.9"]])"));
  EXPECT_EQ(validation["notes"].size(), 2u);
  inputs.validation_markdown = "no table here\n";
  EXPECT_THROW(report_data(inputs), std::runtime_error);
}

// A measured point off the sweep's grid widens the grid; cells keep their settings.
TEST(Report, TheHeatmapMarksMeasuredPointsAtTheirSettings) {
  ReportInputs inputs;
  inputs.runs.push_back({"measured: r", {span(Phase::synth, "cpu:0", 0, 1)}});
  SweepTable sweep;
  sweep.columns = {"policy.pool_slabs", "policy.synthesis_threads", "gpu_utilization"};
  sweep.rows = {{"1", "2", "0.4"}, {"1", "4", "0.6"}, {"2", "2", "0.7"}, {"2", "4", "0.95"}};
  inputs.sweep = sweep;
  inputs.measured_points = {{"run-t8-s2", 8, 2, 0.9}};
  const nlohmann::json heatmap = report_data(inputs)["heatmap"];
  EXPECT_EQ(heatmap["threads"], nlohmann::json::parse("[2,4,8]"));
  EXPECT_EQ(heatmap["slabs"], nlohmann::json::parse("[1,2]"));
  EXPECT_EQ(heatmap["cells"].size(), 4u);
  EXPECT_EQ(heatmap["cells"][3], nlohmann::json::parse("[1,1,95.0]"));
  EXPECT_EQ(heatmap["measured"], nlohmann::json::parse(R"([[2,1,90.0,"run-t8-s2"]])"));
}

TEST(Report, OnlyPinnedRunsArePointsOnTheHeatmap) {
  trace::Sidecar sidecar;
  sidecar.settings = {.job = {.synthesis_threads = 8, .pool_slabs = 4}, .copies_staging = policy::Staging::pinned};
  const trace::Trace spans = {span(Phase::ntt, "gpu0:w0", 0, 1), span(Phase::ntt, "gpu0:w0", 1.5, 2)};
  const auto point = heatmap_point("run", sidecar, spans);
  ASSERT_TRUE(point);
  EXPECT_EQ(point->synthesis_threads, 8);
  EXPECT_EQ(point->pool_slabs, 4);
  EXPECT_NEAR(point->gpu_utilization, 0.75, 1e-12);
  sidecar.settings.copies_staging = policy::Staging::pageable;
  EXPECT_FALSE(heatmap_point("run", sidecar, spans));
}

// Everything the page needs is in it: no element loads a file or the network, and a script's
// text cannot end its element early.
TEST(Report, ThePageIsSelfContained) {
  ReportInputs inputs;
  inputs.title = "a <b> title";
  inputs.runs.push_back({"measured: </script><script>alert(1)", {span(Phase::synth, "cpu:0", 0, 1)}});
  const std::string page = render_report(inputs, "var library = '</script>';");
  EXPECT_NE(page.find("<title>a &lt;b&gt; title</title>"), std::string::npos);
  EXPECT_EQ(page.find("</script><script>alert"), std::string::npos);
  EXPECT_NE(page.find("var library = '<\\/script>';"), std::string::npos);
  for (const char* loads : {" src=", "<link", "@import"}) EXPECT_EQ(page.find(loads), std::string::npos) << loads;
  EXPECT_EQ(page.find("rendered charts"), std::string::npos);
  EXPECT_NE(page.find("echarts.init"), std::string::npos);  // the page's own script
}

TEST(Report, AMissingChartLibraryIsOneClearError) {
  try {
    read_chart_library("/nonexistent/echarts.min.js");
    FAIL() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/echarts.min.js is missing: run tools/install-deps.sh"), std::string::npos)
        << error.what();
  }
}

// A validation file that cannot be read and an empty one are each named as what they are.
TEST(Report, AValidationFileUnreadableOrEmptyIsNamedAsSuch) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path();
  const std::filesystem::path empty = folder / fmt::format("zkpipe-empty-validation-{}.md", ::getpid());
  std::ofstream{empty}.flush();
  const auto message_of = [](const std::filesystem::path& path) {
    try {
      read_validation_file(path);
    } catch (const std::runtime_error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of(folder), folder.string() + ": cannot be read: give the validation.md that zkpipe validate writes");
  EXPECT_EQ(message_of(empty), empty.string() + ": empty: give the validation.md that zkpipe validate writes");
  std::filesystem::remove(empty);
}

// The schema only ever adds phases: every index, today's and 49 more, has its own valid colour,
// and the page's legend has one per phase.
TEST(Report, EveryPhaseOfTheSchemaAndAnyAddedOneHasItsOwnColour) {
  std::set<std::string> colours;
  const std::size_t indices = std::size(trace::all_phases) + 49;
  for (std::size_t index = 0; index < indices; ++index) {
    const std::string colour = phase_colour(index);
    ASSERT_EQ(colour.size(), 7u) << colour;
    EXPECT_EQ(colour.find_first_not_of("#0123456789abcdef"), std::string::npos) << colour;
    EXPECT_TRUE(colours.insert(colour).second) << "phase " << index << " repeats " << colour;
  }
  const nlohmann::json phases = data_of({span(Phase::synth, "cpu:0", 0, 1)})["phases"];
  ASSERT_EQ(phases.size(), std::size(trace::all_phases));
  for (trace::Phase phase : trace::all_phases) {
    EXPECT_EQ(phases[std::size_t(phase)]["name"], trace::phase_name(phase));
    EXPECT_EQ(phases[std::size_t(phase)]["colour"], phase_colour(std::size_t(phase)));
  }
}

}  // namespace
}  // namespace zkpipe::model
