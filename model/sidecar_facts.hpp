// Contract: the sidecar written next to a simulated trace: the scenario (as JSON), the effective
// settings that calibration reads back (settings.staging: what the copies used, after any
// pageable fallback; machine.pcie_h2d_gbps) and versions.
#pragma once

#include "scenario.hpp"
#include "simulation.hpp"
#include "trace/sidecar.hpp"

namespace zkpipe::model {

trace::Sidecar simulation_sidecar(const Scenario& scenario, const SimulationResult& result);

}  // namespace zkpipe::model
