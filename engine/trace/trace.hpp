// Contract: the shared trace schema. One Span per busy or waiting interval of one partition's
// phase on one resource; the engine writes measured spans, the model simulated ones, and
// calibration, comparison and the report read both through this one type. Phases are only ever
// added, never renamed (their names are the CSV vocabulary). Plain data; no global state.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/enum_names.hpp"

namespace zkpipe::trace {

// witness_split: a worker's host work between its copy and its GPU's compute section (the witness
// split into zero, one and significant scalars), from schema version 2.
enum class Phase {
  synth, wait_budget, wait_pool, h2d, ntt, msm_h, msm_l, msm_a, msm_b1, msm_b2,
  batch_add, tail_msm, d2h, assemble, verify, witness_split
};
inline constexpr zk::EnumNames<Phase, 16> phase_names{{
    {"synth", Phase::synth}, {"wait_budget", Phase::wait_budget}, {"wait_pool", Phase::wait_pool}, {"h2d", Phase::h2d},
    {"ntt", Phase::ntt}, {"msm_h", Phase::msm_h}, {"msm_l", Phase::msm_l}, {"msm_a", Phase::msm_a},
    {"msm_b1", Phase::msm_b1}, {"msm_b2", Phase::msm_b2}, {"batch_add", Phase::batch_add}, {"tail_msm", Phase::tail_msm},
    {"d2h", Phase::d2h}, {"assemble", Phase::assemble}, {"verify", Phase::verify}, {"witness_split", Phase::witness_split}}};
// Every phase, in schema order.
inline constexpr auto all_phases = [] {
  std::array<Phase, phase_names.size()> phases{};
  std::ranges::transform(phase_names, phases.begin(), &zk::EnumName<Phase>::value);
  return phases;
}();
// The phases that keep a GPU's compute units busy (they count toward GPU utilization) when they
// run on a GPU's resource.
inline constexpr Phase gpu_compute_phases[] = {
    Phase::ntt, Phase::msm_h, Phase::msm_l, Phase::msm_a, Phase::msm_b1, Phase::msm_b2,
    Phase::batch_add, Phase::tail_msm};

inline std::string_view phase_name(Phase phase) { return zk::name_of(phase_names, phase); }
inline std::optional<Phase> parse_phase(std::string_view name) { return zk::value_of(phase_names, name); }
bool is_gpu_compute(Phase phase);

enum class Source { measured, simulated };
inline constexpr zk::EnumNames<Source, 2> source_names{{{"measured", Source::measured}, {"simulated", Source::simulated}}};
inline std::string_view source_name(Source source) { return zk::name_of(source_names, source); }
inline std::optional<Source> parse_source(std::string_view name) { return zk::value_of(source_names, name); }

struct Span {
  std::string run;        // names one run; a file may hold several
  Source source = Source::simulated;
  std::uint32_t partition = 0;
  Phase phase = Phase::synth;
  std::string resource;   // what was busy: "cpu:3", "gpu0:w1", "pcie0:h2d"
  double start_s = 0;
  double end_s = 0;
  std::uint64_t bytes = 0;  // bytes moved (h2d, d2h) or held (a/b/c of synth)
  std::uint64_t items = 0;  // constraints, scalars or points the phase worked on
  // Schema version 2: which attempt at the partition (0 for the first) and which GPU worker
  // (gpu * workers_per_gpu + index; none for a synthesis thread's spans). Unknown in version 1.
  std::optional<std::uint32_t> attempt = std::nullopt;
  std::optional<std::uint32_t> worker = std::nullopt;

  double duration_s() const { return end_s - start_s; }
};

using Trace = std::vector<Span>;

// "gpu0:w1" -> "gpu0"; "" when the resource does not start with "gpu".
std::string gpu_of_resource(std::string_view resource);

// A GPU compute phase on a GPU's resource: what keeps a GPU busy. A GPU phase traced on a host
// resource (cuzk's B G2 MSM, which supraseal computes on the CPU: msm_b2 on "cpu:gpu0w1") is host
// work: no GPU's utilization, no kernel cost to calibrate.
bool is_gpu_kernel(const Span& span);

}  // namespace zkpipe::trace
