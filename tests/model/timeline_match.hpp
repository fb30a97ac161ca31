// timeline_match.hpp — whether two simulations of one scenario (SimGrid and logical time) ran the
// same timeline: the same outcomes and faults, every partition's work at the same times (within
// 0.1 us: SimGrid rounds its event times). Resources and wait spans are left out: where several actors act at one
// instant the two schedulers order them their own way, and which of several waiting threads takes
// a partition then is such a tie. The scenario must be one where nothing contends (see
// uncontended()): else the order at an instant changes costs too (a copy that starts at the instant
// a synthesis starts sees it load memory in one runtime and not in the other).
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "simulation.hpp"

namespace zkpipe::model::testing {

inline std::string describe_span(const trace::Span& span) {
  return fmt::format("partition {} {} on {} [{:.9f}, {:.9f}] {} bytes {} items", span.partition,
                     trace::phase_name(span.phase), span.resource, span.start_s, span.end_s, span.bytes, span.items);
}

// `scenario` where nothing contends: syntheses do not slow each other or load the copies' memory,
// and every thread and worker has a core. The caller keeps to one copy engine per GPU and GPUs
// that cannot fill the memory bus, where SimGrid would share links that logical time does not.
inline Scenario uncontended(Scenario scenario) {
  scenario.calibration.synth_slowdown_per_extra_thread = 0;
  scenario.calibration.synth_memory_load_threads = 0;
  scenario.hardware.cores = std::max(scenario.hardware.cores, scenario.policy.synthesis_threads +
                                                                  scenario.hardware.gpus * scenario.policy.workers_per_gpu);
  return scenario;
}

// The spans of work, by (partition, start, phase).
inline std::vector<trace::Span> work_by_partition(std::vector<trace::Span> spans) {
  std::erase_if(spans, [](const trace::Span& span) {
    return span.phase == trace::Phase::wait_pool || span.phase == trace::Phase::wait_budget;
  });
  std::ranges::sort(spans, [](const trace::Span& a, const trace::Span& b) {
    return std::tie(a.partition, a.start_s, a.phase) < std::tie(b.partition, b.start_s, b.phase);
  });
  return spans;
}

// The first difference between the two timelines, or nullopt when they agree.
inline std::optional<std::string> timeline_difference(const SimulationResult& simgrid, const SimulationResult& logical) {
  if (simgrid.proved != logical.proved || simgrid.failed != logical.failed ||
      simgrid.failed_attempts != logical.failed_attempts || !(simgrid.faults_injected == logical.faults_injected))
    return fmt::format("outcomes differ: SimGrid {} proved, {} failed, {} attempts failed, faults {}; logical {}, {}, {}, {}",
                       simgrid.proved, simgrid.failed, simgrid.failed_attempts,
                       faults::format_fault_counts(simgrid.faults_injected), logical.proved, logical.failed,
                       logical.failed_attempts, faults::format_fault_counts(logical.faults_injected));
  const auto expected = work_by_partition(simgrid.spans), actual = work_by_partition(logical.spans);
  if (expected.size() != actual.size())
    return fmt::format("SimGrid has {} spans of work, logical time {}", expected.size(), actual.size());
  const double tolerance_s = 1e-7;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const trace::Span &a = expected[i], &b = actual[i];
    if (a.partition != b.partition || a.phase != b.phase || a.bytes != b.bytes || a.items != b.items ||
        std::abs(a.start_s - b.start_s) > tolerance_s || std::abs(a.end_s - b.end_s) > tolerance_s)
      return fmt::format("span {}: SimGrid {}, logical {}", i, describe_span(a), describe_span(b));
  }
  return std::nullopt;
}

}  // namespace zkpipe::model::testing
