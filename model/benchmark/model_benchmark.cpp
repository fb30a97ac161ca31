// Benchmark of the model (a program, not a timed test): prints simulated activities per second
// (SimGrid executions and communications; target >= 500k/s) and the wall time of a 100-point
// sweep of a 100-partition scenario (target <= 60 s on a 2-core machine).
//   zkpipe_model_benchmark [SCENARIO]   (default: scenarios/seed-pageable-vs-pinned.toml)
#include <chrono>
#include <ctime>
#include <iostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "child_process.hpp"
#include "scenario.hpp"
#include "simulation.hpp"
#include "sweep.hpp"

namespace {

using namespace zkpipe::model;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void measure_activities_per_second(const Scenario& base) {
  for (const char* staging : {"\"pinned\"", "\"pageable\""}) {
    Scenario scenario = with_setting(base, "policy.staging", staging);
    scenario = with_setting(scenario, "workload.partitions", "5000");
    const auto outputs = run_in_children(1, [&](std::size_t) {
      const auto start = Clock::now();
      const std::clock_t cpu_start = std::clock();
      const SimulationResult result = simulate_in_this_process(scenario);
      return fmt::format("{} {} {}", result.activities, seconds_since(start),
                         double(std::clock() - cpu_start) / CLOCKS_PER_SEC);
    }, 1);
    std::uint64_t activities = 0;
    double wall_s = 0, cpu_s = 0;
    std::istringstream(outputs.front()) >> activities >> wall_s >> cpu_s;
    // CPU seconds as well as wall seconds: on a shared machine the wall clock also counts other work.
    std::cout << fmt::format("{:<10} 5000 partitions: {} activities in {:.3f} s wall, {:.3f} s CPU = {:.0f} activities/s "
                             "wall, {:.0f} per CPU second (target >= 500000)\n",
                             staging, activities, wall_s, cpu_s, double(activities) / wall_s, double(activities) / cpu_s);
  }
}

void measure_sweep(const Scenario& base) {
  const Scenario scenario = with_setting(base, "workload.partitions", "100");
  std::vector<SweepPoint> points;
  for (int slabs = 2; slabs <= 20; slabs += 2)
    for (int threads = 4; threads <= 40; threads += 4) {
      SweepPoint point;
      point.settings = {{"policy.pool_slabs", std::to_string(slabs)}, {"policy.synthesis_threads", std::to_string(threads)}};
      point.scenario = with_setting(with_setting(scenario, "policy.pool_slabs", std::to_string(slabs)),
                                    "policy.synthesis_threads", std::to_string(threads));
      points.push_back(std::move(point));
    }
  const std::size_t parallel = std::max(1u, std::thread::hardware_concurrency());
  const auto start = Clock::now();
  const SweepTable table = run_sweep(points, parallel);
  const double wall_s = seconds_since(start);
  double activities = 0;
  for (const auto& row : table.rows) activities += std::stod(row[table.column("activities")]);
  std::cout << fmt::format("sweep: {} points of 100 partitions in {:.2f} s with {} processes (target <= 60 s); "
                           "{:.0f} activities/s over the sweep\n",
                           table.rows.size(), wall_s, parallel, activities / wall_s);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string path = argc > 1 ? argv[1] : ZKPIPE_SOURCE_DIR "/scenarios/seed-pageable-vs-pinned.toml";
    const Scenario base = load_scenario_file(path).base;
    measure_activities_per_second(base);
    measure_sweep(base);
  } catch (const std::exception& error) {
    std::cerr << "zkpipe_model_benchmark: " << error.what() << '\n';
    return 1;
  }
  return 0;
}
