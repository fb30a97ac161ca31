// Contract: the pipeline invariants, checked on any trace in the shared schema: simulated by the
// model, measured by the engine, or written with logical time by the property tests' policy
// harness. A pure function of the spans and of what the run was configured with and reported;
// it returns every violation found (empty when all hold), each naming its invariant and the
// partition, resource and times at fault. Spans may come in any order.
//
// Invariants (an attempt of a partition begins at each of its synth spans; times compare with a
// tolerance of the CSV's nine decimals):
//   phases_in_order        within an attempt: synth -> h2d -> GPU compute -> d2h -> assemble ->
//                          verify, each starting after every earlier phase ended; no attempt
//                          after the one that assembled the proof (unless proofs may be
//                          rejected). wait_* spans are the waiting thread's (one may begin
//                          during the partition's previous attempt) and are not ordered
//   ends_exactly_once      at most one assemble per partition (per attempt, where proofs may be
//                          rejected); partitions whose last attempt assembled == proved (>= where
//                          proofs may be rejected); proved + failed == partitions (none lost,
//                          none duplicated)
//   gpu_compute_exclusive  GPU compute spans of one GPU never overlap
//   holdings_within_limits an attempt holds its a/b/c from synthesis start to the end of its
//                          first copy: at every instant the holders' bytes <= the budget, their
//                          number <= the in-flight limit and, pinned staging throughout,
//                          <= the pools' slabs; with one pool per GPU, also the holders copied
//                          to one GPU (named by their copy's resource) <= that GPU's pool
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/enum_names.hpp"
#include "trace.hpp"

namespace zkpipe::trace {

struct RunExpectations {
  std::uint32_t partitions = 0;
  std::uint32_t proved = 0;  // as the run reported them
  std::uint32_t failed = 0;
  std::uint64_t host_budget_bytes = 0;
  std::uint32_t partitions_in_flight_max = 0;
  std::optional<std::uint32_t> pool_slabs;  // slabs of each pool; set when every copy used pinned staging
  std::uint32_t pools = 1;                  // > 1: one pool per GPU, a partition copied from its GPU's
  // The engine verifies each proof after assembling it and retries one that fails: then only a
  // partition's last attempt decides whether it was proved. Otherwise (the model, the policy
  // harness) an assembled proof ends the partition.
  bool proofs_may_be_rejected = false;
};

enum class Invariant { phases_in_order, ends_exactly_once, gpu_compute_exclusive, holdings_within_limits };
inline constexpr zk::EnumNames<Invariant, 4> invariant_names{{{"phases_in_order", Invariant::phases_in_order},
                                                              {"ends_exactly_once", Invariant::ends_exactly_once},
                                                              {"gpu_compute_exclusive", Invariant::gpu_compute_exclusive},
                                                              {"holdings_within_limits", Invariant::holdings_within_limits}}};
std::string_view invariant_name(Invariant invariant);

struct Violation {
  Invariant invariant = Invariant::phases_in_order;
  std::string detail;
};

std::vector<Violation> check_invariants(std::span<const Span> spans, const RunExpectations& expected);

// One line per violation: "<invariant>: <detail>".
std::string format_violations(std::span<const Violation> violations);

}  // namespace zkpipe::trace
