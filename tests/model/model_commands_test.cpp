// End-to-end tests of the model's commands through CLI11, as `zkpipe` runs them: simulate writes
// a trace and its sidecar; calibrate on some runs, simulate the held-out one and compare (the loop
// the README promises for the engine's traces, here with a simulated "measurement"); sweep and
// report write their files; bad input is one line on stderr and exit code 1.
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "compare.hpp"
#include "run_zkpipe.hpp"
#include "test_support.hpp"
#include "trace/summary.hpp"
#include "trace/trace_csv.hpp"

namespace zkpipe::model {
namespace {

using testing::run_zkpipe;

std::string costs_removed(std::string text) { return text.substr(0, text.find("[h2d.pinned]")); }

TEST(ModelCommands, CalibratedOnSomeRunsPredictsAHeldOutRunWithinFivePercent) {
  testing::ScratchDirectory scratch;
  const auto dir = scratch.path();
  std::ofstream(dir / "truth.toml") << testing::small_scenario_text();
  std::vector<std::string> calibrate = {"calibrate"};
  for (const char* staging : {"pinned", "pageable"})
    for (const char* threads : {"2", "6"}) {
      const std::string trace = (dir / fmt::format("{}-{}.csv", staging, threads)).string();
      ::testing::internal::CaptureStdout();
      ASSERT_EQ(run_zkpipe({"simulate", (dir / "truth.toml").string(), "--set", fmt::format("policy.staging=\"{}\"", staging),
                            "--set", fmt::format("policy.synthesis_threads={}", threads), "-o", trace}),
                0);
      ::testing::internal::GetCapturedStdout();
      EXPECT_TRUE(std::filesystem::exists(dir / fmt::format("{}-{}.json", staging, threads)));
      calibrate.push_back(trace);
    }
  calibrate.insert(calibrate.end(), {"-o", (dir / "fit.toml").string()});
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_zkpipe(calibrate), 0);
  const std::string fits = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(fits.find("fit gpu_phase_cost.ntt"), std::string::npos) << fits;
  EXPECT_NE(fits.find("residual"), std::string::npos);

  std::ofstream(dir / "calibrated.toml") << "calibration = \"fit.toml\"\n" << costs_removed(testing::small_scenario_text());
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_zkpipe({"simulate", (dir / "truth.toml").string(), "--set", "policy.synthesis_threads=4", "-o",
                        (dir / "measured.csv").string()}),
            0);
  ASSERT_EQ(run_zkpipe({"simulate", (dir / "calibrated.toml").string(), "--set", "policy.synthesis_threads=4", "-o",
                        (dir / "predicted.csv").string(), "--perfetto", (dir / "predicted.perfetto.json").string()}),
            0);
  ASSERT_EQ(run_zkpipe({"compare", (dir / "measured.csv").string(), (dir / "predicted.csv").string()}), 0);
  ASSERT_EQ(run_zkpipe({"compare", (dir / "measured.csv").string(), (dir / "predicted.csv").string(),
                        (dir / "pinned-2.csv").string(), (dir / "predicted.csv").string()}),
            0);
  const std::string output = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(output.find("mean absolute error (2 runs)"), std::string::npos) << output;
  EXPECT_NE(output.find("partitions_per_s"), std::string::npos) << output;
  EXPECT_TRUE(std::filesystem::exists(dir / "predicted.perfetto.json"));

  const auto errors = compare_summaries(trace::summarize(trace::read_csv_file(dir / "measured.csv")),
                                        trace::summarize(trace::read_csv_file(dir / "predicted.csv")));
  std::size_t checked = 0;
  for (const MetricError& error : errors) {
    if (error.metric == "partitions_per_s" || error.metric == "gpu_utilization") {  // % and points
      EXPECT_LE(std::abs(error.error), 5.0) << output;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2u);
}

TEST(ModelCommands, SweepAndReportWriteTheirFiles) {
  testing::ScratchDirectory scratch;
  const auto dir = scratch.path();
  std::ofstream(dir / "s.toml") << testing::small_scenario_text()
                                << "\n[sweep]\n\"policy.synthesis_threads\" = [2, 4]\n\"policy.pool_slabs\" = [1, 3]\n";
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(run_zkpipe({"sweep", (dir / "s.toml").string(), "-j", "2", "-o", (dir / "sweep.csv").string()}), 0);
  ASSERT_EQ(run_zkpipe({"simulate", (dir / "s.toml").string(), "-o", (dir / "t.csv").string()}), 0);
  ASSERT_EQ(run_zkpipe({"report", (dir / "t.csv").string(), "--sweep", (dir / "sweep.csv").string(), "--scenario",
                        (dir / "s.toml").string(), "-o", (dir / "r.html").string()}),
            0);
  const std::string output = ::testing::internal::GetCapturedStdout();
  const std::string progress = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(progress.find("4/4 points"), std::string::npos) << progress;
  EXPECT_NE(output.find("gpu_utilization"), std::string::npos) << output;
  std::stringstream html;
  html << std::ifstream(dir / "r.html").rdbuf();
  for (const char* part : {"\"heatmap\":{\"cells\"", "\"comparison\":[{", "echarts.init", "Apache"})
    EXPECT_NE(html.str().find(part), std::string::npos) << part;  // the data, the page's script, ECharts inlined

  // The pinned runs below a folder of measured runs are the heatmap's measured points.
  const std::string measured = (testing::source_dir() / "scenarios/calibration/traces/engine-h200-20261201").string();
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_zkpipe({"report", measured + "/new-poseidon-merkle-24-pinned", "--sweep", (dir / "sweep.csv").string(),
                        "--sweep-measured", measured, "-o", (dir / "m.html").string()}),
            0);
  ::testing::internal::GetCapturedStdout();
  std::stringstream measured_html;
  measured_html << std::ifstream(dir / "m.html").rdbuf();
  for (const char* run : {"new-dense-22-pinned", "new-poseidon-merkle-22-pinned", "new-poseidon-merkle-24-pinned"})
    EXPECT_NE(measured_html.str().find(fmt::format("\"{}\"]", run)), std::string::npos) << run;
  EXPECT_EQ(measured_html.str().find("pageable\"]"), std::string::npos);

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_zkpipe({"report", (dir / "t.csv").string(), "--chart-library", (dir / "none.js").string(), "-o",
                        (dir / "r2.html").string()}),
            1);
  const std::string error = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(error.find("zkpipe report: the charting library"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(dir / "r2.html"));
}

TEST(ModelCommands, ValidateCalibratesOnSomeShippedRunsAndTabulatesTheOthers) {
  testing::ScratchDirectory scratch;
  const std::string traces = (testing::source_dir() / "scenarios/calibration/traces/staging-h200-20261129T1020").string();
  const std::string h2d = (testing::source_dir() / "scenarios/calibration/h200-h2d.toml").string();
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_zkpipe({"validate", "--traces", traces, "--calibration", h2d, "--calibrate-on", "*/pinned", "-o",
                        (scratch.path() / "out").string()}),
            0);
  const std::string output = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(output.find("| dense/pageable | 1 | dense-1000000 |"), std::string::npos) << output;
  EXPECT_NE(output.find("| poseidon-merkle/pageable | 1 | poseidon-merkle-975590 |"), std::string::npos) << output;
  EXPECT_NE(output.find("mean |throughput error|"), std::string::npos) << output;
  EXPECT_NE(output.find("fit gpu_phase_cost.msm_b2"), std::string::npos) << output;
  EXPECT_TRUE(std::filesystem::exists(scratch.path() / "out" / "validation.md"));

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_zkpipe({"validate", "--traces", traces, "--calibrate-on", "*", "-o", (scratch.path() / "none").string()}), 1);
  const std::string error = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(error.find("zkpipe validate: "), std::string::npos) << error;
  EXPECT_NE(error.find("need both"), std::string::npos) << error;
}

TEST(ModelCommands, BadInputIsOneLineAndExitCodeOne) {
  testing::ScratchDirectory scratch;
  std::ofstream(scratch.path() / "bad.toml") << "[policy]\nthreads = 3\n";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_zkpipe({"simulate", (scratch.path() / "bad.toml").string()}), 1);
  const std::string error = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1) << error;
  EXPECT_NE(error.find("bad.toml:2: policy.threads: unknown key"), std::string::npos) << error;

  ::testing::internal::CaptureStderr();
  std::ofstream(scratch.path() / "broken.csv") << "run,source\nx,y\n";
  EXPECT_EQ(run_zkpipe({"report", (scratch.path() / "broken.csv").string(), "-o", (scratch.path() / "r.html").string()}), 1);
  const std::string trace_error = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(trace_error.find("zkpipe report: "), std::string::npos) << trace_error;
  EXPECT_NE(trace_error.find("broken.csv"), std::string::npos) << trace_error;
}

}  // namespace
}  // namespace zkpipe::model
