#include "trace.hpp"

#include <algorithm>

namespace zkpipe::trace {

bool is_gpu_compute(Phase phase) {
  return std::ranges::find(gpu_compute_phases, phase) != std::end(gpu_compute_phases);
}

std::string gpu_of_resource(std::string_view resource) {
  if (!resource.starts_with("gpu")) return {};
  return std::string(resource.substr(0, resource.find(':')));
}

bool is_gpu_kernel(const Span& span) { return is_gpu_compute(span.phase) && span.resource.starts_with("gpu"); }

}  // namespace zkpipe::trace
