// Contract: simulates one scenario with SimGrid (S4U) and returns its trace in the shared schema.
// The platform is built in code: a multi-core CPU host for synthesis threads (whose progress the
// model computes itself, with one SimGrid timer for the next end) and the workers' CPU work, the
// host memory bus as a link, one PCIe host-to-device link per GPU with its copy engines as an ordered (FIFO)
// resource, GPU hosts whose compute section is serialized per GPU, and GPU workers as actors.
// Every admission, lease and worker choice is made by the shared policy::SchedulingPolicy.
// Deterministic: the same scenario (seed included) gives the same spans, byte for byte.
//
// SimGrid keeps one engine per process and a second one silently continues the first clock, so
// simulate_in_this_process may run once per process; simulate() forks a child that runs it and
// is the one to call from tools and tests.
#pragma once

#include <cstdint>

#include "faults/fault_injector.hpp"
#include "policy/scheduling_policy.hpp"
#include "scenario.hpp"
#include "trace/invariants.hpp"
#include "trace/trace.hpp"

namespace zkpipe::model {

struct SimulationResult {
  trace::Trace spans;
  std::uint64_t activities = 0;  // SimGrid executions and communications simulated
  std::uint32_t proved = 0;
  std::uint32_t failed = 0;
  std::uint32_t failed_attempts = 0;
  policy::Staging staging = policy::Staging::pinned;  // what the copies used (after any fallback)
  faults::FaultCounts faults_injected;
};

SimulationResult simulate_in_this_process(const Scenario& scenario);
SimulationResult simulate(const Scenario& scenario);

// The same pipeline and costs in logical time, in this process, as often as asked: each step at the
// rate of the load it starts under (no contention while it runs) and no link shared by copy
// engines. SimGrid's timeline exactly where nothing contends; the property tests' fast model.
// A tie seed other than 0 draws the order of the actors acting at one instant (LogicalRuntime).
SimulationResult simulate_in_logical_time(const Scenario& scenario, std::uint64_t tie_seed = 0);

// What the invariant checker may expect of `result`'s trace: runtime::run_expectations of the
// scenario's policy settings and the outcomes, as the engine's zk::pipeline::trace_expectations.
trace::RunExpectations trace_expectations(const Scenario& scenario, const SimulationResult& result);

// The text a child process hands back (a comment line of counters, then the trace CSV).
std::string serialize_result(const SimulationResult& result);
SimulationResult deserialize_result(std::string_view origin, std::string_view text);

}  // namespace zkpipe::model
