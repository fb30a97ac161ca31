// fake_job.hpp — what the engine's tests (engine_test.cpp), the engine property
// (tests/properties/engine_properties.cpp) and the GPU fault tests (tests/gpu/gpu_fault_test.cpp)
// share: small keys, a job run on the fake device (or any backend) with a sink that records what
// it sees, and the check of every promise the engine makes about such a run. The trace's invariants come from the shared checker (trace/invariants.hpp); this
// adds what the trace cannot show. Thread-safe: the key is built once, on first use.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/pipeline/engine.hpp"

namespace zk::pipeline::testing {

// poseidon-merkle at 2^10 constraints (a mostly 0/1 witness, the Filecoin shape), seeded setup.
struct SmallKey {
  std::unique_ptr<circuits::Circuit> circuit;
  groth16::ProvingKey pk;
};
const SmallKey& small_key();
// A poseidon-merkle key of about `constraints` constraints, seeded setup (not cached).
SmallKey make_small_key(uint64_t constraints);
// One partition's host bytes: a, b, c and the witness.
uint64_t partition_bytes();

struct FakeJobOutcome {
  JobReport report;
  std::map<uint32_t, int> deliveries;    // partition -> times the sink saw it
  std::vector<std::string> unverified;   // delivered proofs that do not verify, one line each
};
// `partitions` partitions of the small key (witness seeds 100..) on the fake device, silently.
FakeJobOutcome run_fake_job(uint32_t partitions, Settings settings);
// The same on `key` and settings.backend.
FakeJobOutcome run_recorded_job(const SmallKey& key, uint32_t partitions, const Settings& settings);

// Every promise the run broke, one line each (empty when all hold):
// - the measured trace passes trace::check_invariants (trace_expectations(report));
// - each proved partition was delivered exactly once, each delivered proof verifies, no failed
//   partition was delivered and each failure says why;
// - the budget's and each pinned pool's high-water marks are within their limits;
// - a proved partition's spans include every phase of a proof (synthesis to verification);
// - on a fault-injecting backend (fake, faulty-cuda), every failed attempt is an injected fault:
//   failed attempts == copy errors + kernel errors + wrong results + device allocation failures,
//   and lost workers == injected device losses + device resets.
std::vector<std::string> job_violations(const FakeJobOutcome& outcome);
std::string format_lines(const std::vector<std::string>& lines);

}  // namespace zk::pipeline::testing
