#include "engine/groth16/backend_registry.hpp"

#include <fmt/ranges.h>

#include "engine/groth16/cpu_backend.hpp"
#ifdef ZKPIPE_HAVE_CUDA
#include "engine/groth16/cuda_backend.hpp"
#include "engine/groth16/cuda_setup.hpp"
#endif
#include "engine/util/error.hpp"

namespace zk::groth16 {

std::vector<std::string> backend_names() {
#ifdef ZKPIPE_HAVE_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

namespace {
[[noreturn]] void unavailable(const std::string& name) {
  fail("backend '{}' is not available in this build; available: {}", name, fmt::join(backend_names(), ", "));
}
}  // namespace

std::unique_ptr<ProverBackend> make_backend(const std::string& name) {
  if (name == "cpu") return std::make_unique<CpuBackend>();
#ifdef ZKPIPE_HAVE_CUDA
  if (name == "cuda") return std::make_unique<CudaBackend>();
#endif
  unavailable(name);
}

std::unique_ptr<FixedBaseMultiplier> make_fixed_base_multiplier(const std::string& name) {
  if (name == "cpu") return std::make_unique<CpuFixedBase>();
#ifdef ZKPIPE_HAVE_CUDA
  if (name == "cuda") return std::make_unique<CudaFixedBaseMultiplier>();
#endif
  unavailable(name);
}

}  // namespace zk::groth16
