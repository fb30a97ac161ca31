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
  // The engine's settings under the engine's names (policy::JobSettings), and what the engine's
  // sidecar adds: the staging the copies used, after any pageable fallback, beside the one asked for.
  sidecar.settings = static_cast<const policy::JobSettings&>(scenario.policy);
  sidecar.settings["staging_requested"] = policy::staging_name(scenario.staging());
  sidecar.settings["staging"] = policy::staging_name(result.staging);
  sidecar.settings["synthesis_core_share"] = zk::name_of(synthesis_core_share_names, scenario.policy.synthesis_core_share);
  sidecar.settings["gpus"] = scenario.hardware.gpus;
  sidecar.settings["partitions"] = scenario.workload.partitions;
  sidecar.settings["seed"] = scenario.seed;
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

SynthesisCoreShare synthesis_core_share_of(const trace::Sidecar& sidecar) {
  const std::string name = sidecar.settings.value("synthesis_core_share", std::string("threads"));
  if (const auto rule = zk::value_of(synthesis_core_share_names, name)) return *rule;
  throw std::runtime_error(fmt::format("sidecar settings.synthesis_core_share \"{}\": expected one of {}", name,
                                       zk::joined_names(synthesis_core_share_names, ", ", "\"")));
}

}  // namespace zkpipe::model
