// Contract: the engine's property (see property_suite.hpp), compiled into the suite where the
// engine (engine/pipeline) is built: a whole job on the fake device backend with random settings
// and faults drawn from the one seeded fault source (faults::FaultInjector, the model's), proved
// for real on the CPU; the run must keep every promise tests/engine/fake_job.hpp checks (the
// shared trace::check_invariants with proofs that may be rejected, each proved partition
// delivered once, every failed attempt an injected fault). The faults it injected join the
// suite's tally, so `zkpipe soak` counts them. The fault seed is in the printed counterexample;
// RapidCheck's reproduce string replays the case. A RapidCheck property body.
#pragma once

namespace zkpipe::properties {

void measured_traces_keep_the_pipeline_invariants();

}  // namespace zkpipe::properties
