#include "engine/groth16/backend_registry.hpp"

#include <fmt/ranges.h>

#include "engine/groth16/cpu_backend.hpp"
#ifdef ZKPIPE_HAVE_CUDA
#include "engine/groth16/cuda_backend.hpp"
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

std::unique_ptr<ProverBackend> make_backend(const std::string& name) {
  if (name == "cpu") return std::make_unique<CpuBackend>();
#ifdef ZKPIPE_HAVE_CUDA
  if (name == "cuda") return std::make_unique<CudaBackend>();
#endif
  fail("backend '{}' is not available in this build; available: {}", name,
       fmt::join(backend_names(), ", "));
}

}  // namespace zk::groth16
