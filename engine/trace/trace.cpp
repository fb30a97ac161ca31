#include "trace.hpp"

#include <algorithm>

namespace zkpipe::trace {

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::synth: return "synth";
    case Phase::wait_budget: return "wait_budget";
    case Phase::wait_pool: return "wait_pool";
    case Phase::h2d: return "h2d";
    case Phase::ntt: return "ntt";
    case Phase::msm_h: return "msm_h";
    case Phase::msm_l: return "msm_l";
    case Phase::msm_a: return "msm_a";
    case Phase::msm_b1: return "msm_b1";
    case Phase::msm_b2: return "msm_b2";
    case Phase::batch_add: return "batch_add";
    case Phase::tail_msm: return "tail_msm";
    case Phase::d2h: return "d2h";
    case Phase::assemble: return "assemble";
    case Phase::verify: return "verify";
    case Phase::witness_split: return "witness_split";
  }
  return "unknown";
}

std::optional<Phase> parse_phase(std::string_view name) {
  for (Phase phase : all_phases)
    if (phase_name(phase) == name) return phase;
  return std::nullopt;
}

bool is_gpu_compute(Phase phase) {
  return std::ranges::find(gpu_compute_phases, phase) != std::end(gpu_compute_phases);
}

std::string_view source_name(Source source) {
  return source == Source::measured ? "measured" : "simulated";
}

std::optional<Source> parse_source(std::string_view name) {
  if (name == "measured") return Source::measured;
  if (name == "simulated") return Source::simulated;
  return std::nullopt;
}

std::string gpu_of_resource(std::string_view resource) {
  if (!resource.starts_with("gpu")) return {};
  return std::string(resource.substr(0, resource.find(':')));
}

bool is_gpu_kernel(const Span& span) { return is_gpu_compute(span.phase) && span.resource.starts_with("gpu"); }

}  // namespace zkpipe::trace
