// Tests of the HTML report: its charts are present, and headless Chromium lays them out
// (skipped, saying why, where chromium is not installed; tools/install-deps.sh installs it).
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>

#include <fmt/format.h>

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

// The schema only ever adds phases: every index, today's and 49 more, has its own valid colour,
// and the legend shows one per phase.
TEST(Report, EveryPhaseOfTheSchemaAndAnyAddedOneHasItsOwnColour) {
  std::set<std::string> colours;
  const std::size_t indices = std::size(trace::all_phases) + 49;
  for (std::size_t index = 0; index < indices; ++index) {
    const std::string colour = phase_colour(index);
    ASSERT_EQ(colour.size(), 7u) << colour;
    EXPECT_EQ(colour.find_first_not_of("#0123456789abcdef"), std::string::npos) << colour;
    EXPECT_TRUE(colours.insert(colour).second) << "phase " << index << " repeats " << colour;
  }
  const std::string html = small_report();
  for (trace::Phase phase : trace::all_phases)
    EXPECT_NE(html.find(fmt::format("background:{}\"></i>{}<", phase_colour(std::size_t(phase)), trace::phase_name(phase))),
              std::string::npos) << trace::phase_name(phase);
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
