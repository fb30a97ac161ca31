// Contract: the sidecar written next to a simulated trace: the scenario (its name, partitions and
// file, as JSON), the effective settings that calibration reads back (settings.staging: what the
// copies used, after any pageable fallback; settings.synthesis_core_share; machine.pcie_h2d_gbps)
// and versions; and the facts that calibration and validation read from any trace's sidecar.
#pragma once

#include "scenario.hpp"
#include "simulation.hpp"
#include "trace/sidecar.hpp"

namespace zkpipe::model {

trace::Sidecar simulation_sidecar(const Scenario& scenario, const SimulationResult& result);

// How the engine that wrote a trace split the cores between its syntheses: the sidecar's
// settings.synthesis_core_share, `threads` where it names none (engines before 2026-12-01).
// Throws std::runtime_error on a name it does not know.
SynthesisCoreShare synthesis_core_share_of(const trace::Sidecar& sidecar);

}  // namespace zkpipe::model
