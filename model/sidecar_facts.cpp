#include "sidecar_facts.hpp"

#include <sstream>

#include <fmt/format.h>
#include <simgrid/config.h>  // SG_BEGIN_DECL and XBT_PUBLIC, which version.h needs
#include <simgrid/version.h>

namespace zkpipe::model {

trace::Sidecar simulation_sidecar(const Scenario& scenario, const SimulationResult& result) {
  trace::Sidecar sidecar;
  sidecar.source = trace::Source::simulated;
  std::ostringstream scenario_json;
  scenario_json << toml::json_formatter{scenario.table};
  sidecar.scenario = {.job = scenario.name,
                      .partitions = scenario.workload.partitions,
                      .scenario_file = nlohmann::json::parse(scenario_json.str())};
  // The engine's settings, their staging the pipeline's after any pageable fallback, and the memory
  // its copies read.
  sidecar.settings = {.job = scenario.policy,
                      .copies_staging = scenario.copies_staging(result.staging),
                      .synthesis_core_share = scenario.policy.synthesis_core_share,
                      .gpus = scenario.hardware.gpus,
                      .seed = scenario.seed};
  sidecar.settings.job.staging = result.staging;
  sidecar.machine = {.cores = scenario.hardware.cores,
                     .gpus = scenario.hardware.gpus,
                     .host_memory_gbps = scenario.hardware.host_memory_gbps,
                     .copy_engines_h2d = scenario.hardware.copy_engines_h2d,
                     .pcie_h2d_gbps = scenario.hardware.pcie_h2d_gbps};
  sidecar.summary = trace::summary_json(trace::summarize(result.spans));
  sidecar.versions = {{"zkpipe_model", "1"},
                      {"simgrid", fmt::format("{}.{}.{}", SIMGRID_VERSION_MAJOR, SIMGRID_VERSION_MINOR,
                                              SIMGRID_VERSION_PATCH)}};
  return sidecar;
}

}  // namespace zkpipe::model
