// Contract: the sidecar written next to a simulated trace: the scenario (its name, partitions and
// file, as JSON), the settings as the engine would state them (trace::RunSettings: the staging the
// copies used, after any pageable fallback, and the synthesis core share, which calibration reads
// back), the machine (machine.pcie_h2d_gbps: the link) and versions.
#pragma once

#include "scenario.hpp"
#include "simulation.hpp"
#include "trace/sidecar.hpp"

namespace zkpipe::model {

trace::Sidecar simulation_sidecar(const Scenario& scenario, const SimulationResult& result);

}  // namespace zkpipe::model
