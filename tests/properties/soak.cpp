#include "soak.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "child_process.hpp"
#include "property_suite.hpp"

namespace zkpipe::properties {

namespace {

// Cases per chunk: a policy case takes well under a millisecond, a pipeline case about a
// millisecond, a model case one or two simulations of a few milliseconds in child processes, an
// engine case about a second.
constexpr std::uint64_t policy_cases_per_chunk = 1000;
constexpr std::uint64_t pipeline_cases_per_chunk = 500;
constexpr std::uint64_t model_cases_per_chunk = 25;
constexpr std::uint64_t engine_cases_per_chunk = 5;

struct Chunk {
  const NamedProperty* property;
  std::uint64_t seed;
  int cases;
};

std::vector<Chunk> plan_chunks(const SoakOptions& options) {
  std::map<PropertyKind, std::vector<const NamedProperty*>> by_kind;
  for (const NamedProperty& property : all_properties()) {
    const bool chosen = options.property_ids.empty() || std::ranges::find(options.property_ids, property.id) !=
                                                            options.property_ids.end();
    if (chosen) by_kind[property.kind].push_back(&property);
  }
  for (const std::string& id : options.property_ids) property_by_id(id);  // names an unknown id
  std::vector<Chunk> chunks;
  auto spread = [&](const std::vector<const NamedProperty*>& properties, std::uint64_t cases, std::uint64_t per_chunk) {
    for (std::size_t index = 0; index < properties.size(); ++index) {
      // the first properties take the remainder, so the total is exactly `cases`
      std::uint64_t left = cases / properties.size() + (index < cases % properties.size() ? 1 : 0);
      while (left > 0) {
        const std::uint64_t chunk_cases = std::min(left, per_chunk);
        chunks.push_back({properties[index], options.seed + chunks.size(), int(chunk_cases)});
        left -= chunk_cases;
      }
    }
  };
  spread(by_kind[PropertyKind::policy], options.policy_cases, policy_cases_per_chunk);
  spread(by_kind[PropertyKind::pipeline], options.pipeline_cases, pipeline_cases_per_chunk);
  spread(by_kind[PropertyKind::model], options.model_cases, model_cases_per_chunk);
  spread(by_kind[PropertyKind::engine], options.engine_cases, engine_cases_per_chunk);
  return chunks;
}

// A chunk's result as the child hands it back: a line of counts, a line of fault counts, the
// reproduce string line ("-" when none), then the failure text.
std::string serialize(const PropertyRun& run) {
  return fmt::format("{} {}\n{}\n{}\n{}", run.cases_passed, run.failed ? 1 : 0,
                     faults::format_fault_counts(run.faults_injected), run.reproduce.empty() ? "-" : run.reproduce,
                     run.failure);
}

}  // namespace

SoakReport run_soak(const SoakOptions& options, const SoakProgress& progress) {
  const std::vector<Chunk> chunks = plan_chunks(options);
  // RapidCheck reads RC_PARAMS once per process and prints the configuration it uses: load it
  // here, before the children fork, naming the soak's seed (each chunk passes its own seed).
  if (!std::getenv("RC_PARAMS")) ::setenv("RC_PARAMS", fmt::format("seed={}", options.seed).c_str(), 0);
  rc::detail::configuration();
  const std::vector<std::string> outputs = model::run_in_children(
      chunks.size(),
      [&](std::size_t index) {
        const Chunk& chunk = chunks[index];
        return serialize(run_property(*chunk.property, chunk.seed, chunk.cases));
      },
      options.jobs, progress);
  SoakReport report;
  for (std::size_t index = 0; index < chunks.size(); ++index) {
    std::istringstream in(outputs[index]);
    std::uint64_t passed = 0;
    int failed = 0;
    std::string fault_line, reproduce;
    in >> passed >> failed;
    in.ignore(1);
    std::getline(in, fault_line);
    std::getline(in, reproduce);
    if (!in) throw std::runtime_error(fmt::format("soak: chunk {} returned no result", index));
    const std::string id = chunks[index].property->id;
    report.cases += passed + std::uint64_t(failed);
    report.cases_by_property[id] += passed + std::uint64_t(failed);
    const faults::FaultCounts chunk_faults = faults::parse_fault_counts(fault_line);
    report.faults_injected += chunk_faults;
    report.faults_by_property[id] += chunk_faults;
    if (failed) {
      std::ostringstream failure;
      failure << in.rdbuf();
      report.violations.push_back({id, chunks[index].seed, reproduce == "-" ? "" : reproduce, failure.str()});
    }
  }
  return report;
}

std::string format_soak_report(const SoakReport& report) {
  std::string text = fmt::format("cases {}\n", report.cases);
  for (const auto& [id, cases] : report.cases_by_property) {
    const auto faults = report.faults_by_property.find(id);
    text += fmt::format("  {:<58} {:>8} cases {:>8} faults\n", id, cases,
                        faults == report.faults_by_property.end() ? 0 : faults->second.total());
  }
  const faults::FaultCounts& f = report.faults_injected;
  text += fmt::format("faults injected {} (gpu errors {}, pinned allocation failures {}, slow transfers {}, "
                      "stalled transfers {}, worker deaths {}, wrong results {})\n",
                      f.total(), f.gpu_errors, f.pinned_allocation_failures, f.slow_transfers, f.stalled_transfers,
                      f.worker_deaths, f.wrong_results);
  text += fmt::format("violations {}\n", report.violations.size());
  for (const SoakViolation& violation : report.violations) {
    const auto slash = violation.property_id.find('/');
    text += fmt::format("\n{} (seed {}) failed:\n{}\nreplay: RC_PARAMS=\"reproduce={}\" zkpipe_property_tests "
                        "--gtest_filter={}.{}\n",
                        violation.property_id, violation.seed, violation.failure, violation.reproduce,
                        violation.property_id.substr(0, slash), violation.property_id.substr(slash + 1));
  }
  return text;
}

}  // namespace zkpipe::properties
