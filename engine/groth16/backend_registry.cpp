#include "engine/groth16/backend_registry.hpp"

#include <fmt/ranges.h>

#include "engine/groth16/cpu_backend.hpp"
#include "engine/util/error.hpp"

namespace zk::groth16 {

std::vector<std::string> backend_names() { return {"cpu"}; }

std::unique_ptr<ProverBackend> make_backend(const std::string& name) {
  if (name == "cpu") return std::make_unique<CpuBackend>();
  fail("backend '{}' is not available in this build; available: {}", name,
       fmt::join(backend_names(), ", "));
}

}  // namespace zk::groth16
