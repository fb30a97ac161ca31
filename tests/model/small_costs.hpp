// small_costs.hpp — the calibrated costs of a small test workload, as scenario TOML, shared by the
// model tests (test_support.hpp) and the model's property tests: synthesis half a core-second per
// million constraints, GPU phases of comparable length, pinned and pageable H2D paths shaped like
// the H200 fit. Its chunks of a streamed key cost nothing beyond their share of the kernel (the
// H200's default, 10-30 ms a chunk, would swamp kernels of milliseconds and move the timings that
// the property regressions replay).
#pragma once

namespace zkpipe::model::testing {

inline constexpr const char* small_costs_toml = R"(
[h2d.pinned]
overhead_s_per_gb = 0.0
per_thread_s_per_gb = 0.0005
per_thread_squared_s_per_gb = 0.0001

[h2d.pageable]
overhead_s_per_gb = 0.12
per_thread_s_per_gb = 0.008
per_thread_squared_s_per_gb = 0.001

[synthesis]
core_s_per_mconstraint = 0.5
slowdown_per_extra_thread = 0.02

[cpu]
assemble_s = 0.002

[gpu_phase_cost.ntt]
fixed_s = 0.001
per_mitem_s = 0.002
[gpu_phase_cost.msm_h]
fixed_s = 0.002
per_mitem_s = 0.005
stream_chunk_s = 0
[gpu_phase_cost.msm_a]
fixed_s = 0.003
per_mitem_s = 0.02
stream_chunk_s = 0
)";

}  // namespace zkpipe::model::testing
