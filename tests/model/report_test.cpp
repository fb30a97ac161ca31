// Tests of the HTML report: its charts are present, and headless Chromium lays them out
// (skipped, saying why, where chromium is not installed; tools/install-deps.sh installs it).
#include <cstdio>
#include <fstream>
#include <memory>

#include <gtest/gtest.h>

#include "report.hpp"
#include "scenario.hpp"
#include "simulation.hpp"
#include "sweep.hpp"
#include "test_support.hpp"

namespace zkpipe::model {
namespace {

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const std::string command = std::string("command -v ") + name + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
    char path[4096] = {};
    if (pipe && std::fgets(path, sizeof path, pipe.get())) {
      std::string found(path);
      found.erase(found.find_last_not_of("\n") + 1);
      if (!found.empty()) return found;
    }
  }
  return {};
}

std::string run_and_capture(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  std::string output;
  char buffer[1 << 14];
  for (std::size_t got; pipe && (got = std::fread(buffer, 1, sizeof buffer, pipe.get())) > 0;) output.append(buffer, got);
  return output;
}

SweepTable small_sweep() {
  SweepTable table;
  table.columns = {"policy.pool_slabs", "policy.synthesis_threads", "gpu_utilization"};
  table.rows = {{"1", "2", "0.4"}, {"1", "4", "0.6"}, {"2", "2", "0.7"}, {"2", "4", "0.95"}};
  return table;
}

std::string small_report() {
  const Scenario scenario = parse_scenario_text(testing::small_scenario_text(), "small.toml", ".").base;
  return render_report("test report", simulate(scenario).spans, small_sweep());
}

TEST(Report, HasTheThreeChartsAndTheSummary) {
  const std::string html = small_report();
  for (const char* id : {"id=\"timeline\"", "id=\"bandwidth\"", "id=\"heatmap\"", "GPU utilization", "<polyline"})
    EXPECT_NE(html.find(id), std::string::npos) << id;
}

TEST(Report, RendersInHeadlessChromium) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (tools/install-deps.sh installs it): report not rendered";
  testing::ScratchDirectory scratch;
  const auto page = scratch.path() / "report.html";
  std::ofstream(page) << small_report();
  const auto profile = scratch.path() / "profile";
  std::filesystem::create_directories(profile);
  const std::string dom = run_and_capture(
      "'" + chromium + "' --headless --no-sandbox --disable-gpu --disable-background-networking "
      "--disable-component-update --disable-sync --no-first-run --user-data-dir='" + profile.string() +
      "' --dump-dom 'file://" + page.string() + "' 2>/dev/null");
  EXPECT_NE(dom.find("rendered charts: 3"), std::string::npos) << dom.substr(0, 400);
}

}  // namespace
}  // namespace zkpipe::model
