#include "engine_properties.hpp"

#include <fmt/format.h>
#include <rapidcheck.h>

#include "fake_job.hpp"
#include "property_suite.hpp"

namespace zk::pipeline {

// RapidCheck prints the counterexample's settings with it: the fault seed first.
void showValue(const Settings& settings, std::ostream& os) {
  const zkpipe::faults::FaultOptions& f = settings.fake.faults;
  os << "fault seed " << f.seed << "; " << describe(settings);
}

namespace {

rc::Gen<Settings> arbitrary_fake_settings() {
  return rc::gen::exec([] {
    Settings settings;
    settings.backend = "fake";
    settings.synthesis_threads = *rc::gen::inRange<uint32_t>(1, 5);
    settings.partitions_in_flight = *rc::gen::inRange<uint32_t>(1, 5);
    settings.staging = *rc::gen::element(Staging::pinned, Staging::pageable);
    settings.pool_slabs = *rc::gen::inRange<uint32_t>(1, 5);
    settings.host_budget_bytes = uint64_t{1} << 30;
    settings.gpus = *rc::gen::inRange<uint32_t>(1, 9);
    settings.workers_per_gpu = *rc::gen::inRange<uint32_t>(1, 3);
    settings.retry_limit = *rc::gen::inRange<uint32_t>(0, 4);
    zkpipe::faults::FaultOptions& f = settings.fake.faults;
    f.seed = *rc::gen::inRange<uint64_t>(1, 1'000'000);
    f.stalled_transfer_probability = *rc::gen::inRange(0, 31) / 100.0;  // copy errors
    f.slow_transfer_probability = *rc::gen::inRange(0, 31) / 100.0;
    f.gpu_error_probability = *rc::gen::inRange(0, 11) / 100.0;
    f.wrong_result_probability = *rc::gen::inRange(0, 21) / 100.0;
    f.worker_death_probability = *rc::gen::inRange(0, 6) / 100.0;
    f.pinned_allocation_failure_probability = *rc::gen::weightedElement<double>({{9, 0.0}, {1, 1.0}});
    settings.fake.copy_delay_s = *rc::gen::inRange(0, 3) / 1000.0;
    settings.fake.kernel_delay_s = *rc::gen::inRange(0, 2) / 1000.0;
    settings.pool_layout = *rc::gen::element(PoolLayout::per_host, PoolLayout::per_gpu);
    return settings;
  });
}

}  // namespace
}  // namespace zk::pipeline

namespace zkpipe::properties {

void measured_traces_keep_the_pipeline_invariants() {
  using namespace zk::pipeline;
  const uint32_t partitions = *rc::gen::inRange<uint32_t>(1, 7);
  const Settings settings = *arbitrary_fake_settings();
  const testing::FakeJobOutcome outcome = testing::run_fake_job(partitions, settings);
  count_injected_faults(outcome.report.faults_injected);
  const std::vector<std::string> broken = testing::job_violations(outcome);
  if (!broken.empty())
    RC_FAIL(fmt::format("fault seed {}: the engine broke its promises:\n{}", settings.fake.faults.seed,
                        testing::format_lines(broken)));
  RC_TAG(outcome.report.failed_attempts > 0 ? "attempts failed" : "no failed attempt");
}

}  // namespace zkpipe::properties
