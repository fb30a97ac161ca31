#include "soak_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "soak.hpp"

namespace zkpipe::tools {

void add_soak_command(CLI::App& app) {
  auto options = std::make_shared<properties::SoakOptions>();
  options->jobs = std::max(1u, std::thread::hardware_concurrency());
  CLI::App* command = app.add_subcommand(
      "soak", "Run the property suite's generated cases (policy, pipeline, model, engine) in parallel processes; report violations");
  command->add_option("--policy-cases", options->policy_cases, "cases over the scheduling-policy properties")
      ->capture_default_str();
  command->add_option("--pipeline-cases", options->pipeline_cases,
                      "cases over the pipeline properties (the model in logical time, in-process)")
      ->capture_default_str();
  command->add_option("--model-cases", options->model_cases, "cases over the model properties (each simulates)")
      ->capture_default_str();
  command->add_option("--engine-cases", options->engine_cases,
                      "cases over the engine properties (each proves a job on the fake device), where built")
      ->capture_default_str();
  command->add_option("--seed", options->seed, "seed of the first chunk (chunk i uses seed + i)")->capture_default_str();
  command->add_option("-j,--jobs", options->jobs, "processes in parallel (default: cores)")->check(CLI::Range(1, 4096));
  command->add_option("--property", options->property_ids, "only these properties, e.g. PolicyProperties/NoDeadlock");
  command->callback([options] {
    properties::SoakReport report;
    const auto started = std::chrono::steady_clock::now();
    try {
      const bool terminal = ::isatty(STDERR_FILENO);
      report = properties::run_soak(*options, [&](std::size_t done, std::size_t total) {
        if (terminal || done == total) std::cerr << fmt::format("{}{}/{} chunks{}", terminal ? "\r" : "", done, total,
                                                                terminal && done < total ? "" : "\n") << std::flush;
      });
    } catch (const std::exception& error) {
      std::cerr << fmt::format("zkpipe soak: {}\n", error.what());
      throw CLI::RuntimeError(1);
    }
    std::cout << properties::format_soak_report(report)
              << fmt::format("in {:.1f} s with {} processes in parallel (seed {})\n",
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                             options->jobs, options->seed);
    if (!report.violations.empty()) throw CLI::RuntimeError(1);
  });
}

}  // namespace zkpipe::tools
