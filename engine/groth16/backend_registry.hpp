// backend_registry.hpp — prover backends and setup's fixed-base multipliers by name ("cpu",
// "cuda"), for the command line and the engine. make_backend() and make_fixed_base_multiplier()
// throw zk::Error naming the available backends when one is unknown or not built into this
// binary, or when its device is absent.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "engine/groth16/backend.hpp"
#include "engine/groth16/setup.hpp"

namespace zk::groth16 {

std::unique_ptr<ProverBackend> make_backend(const std::string& name);
std::unique_ptr<FixedBaseMultiplier> make_fixed_base_multiplier(const std::string& name);
std::vector<std::string> backend_names();  // the backends built into this binary

}  // namespace zk::groth16
