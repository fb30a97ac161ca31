// Contract: the engine's property (see property_suite.hpp), compiled into the suite where the
// engine (engine/pipeline) is built: a whole job on the fake device backend with random settings
// and fake faults, proved for real on the CPU; its measured trace must pass
// trace::check_invariants (proofs may be rejected: the engine verifies and retries), and the
// proof sink must see each proved partition exactly once. The fault seed is in the printed
// counterexample (FakeDeviceOptions.seed). A RapidCheck property body.
#pragma once

namespace zkpipe::properties {

void measured_traces_keep_the_pipeline_invariants();

}  // namespace zkpipe::properties
