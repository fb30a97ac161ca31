#include "engine_properties.hpp"

#include <map>
#include <mutex>

#include <rapidcheck.h>

#include "engine/groth16/setup.hpp"
#include "engine/pipeline/engine.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "trace/invariants.hpp"

namespace zk::pipeline {

// RapidCheck prints the counterexample's settings with it.
void showValue(const Settings& settings, std::ostream& os) {
  os << describe(settings) << " fault seed " << settings.fake.seed << ", copy_error " << settings.fake.copy_error_probability
     << ", kernel_error " << settings.fake.kernel_error_probability << ", wrong_result "
     << settings.fake.wrong_result_probability << ", device_lost " << settings.fake.device_lost_probability
     << ", refuse_pinning " << settings.fake.refuse_pinning;
}

namespace {

// A small key (poseidon-merkle at 2^10 constraints) proved by every case.
struct SmallKey {
  std::unique_ptr<circuits::Circuit> circuit = circuits::make_circuit({"poseidon-merkle", 1 << 10});
  groth16::ProvingKey pk = [&] {
    r1cs::R1csBuilder builder;
    circuit->synthesize(builder, 0);
    return groth16::setup(builder.take(), groth16::ToxicWaste::from_seed(5), circuit->spec());
  }();
};

rc::Gen<Settings> arbitrary_fake_settings() {
  return rc::gen::exec([] {
    Settings settings;
    settings.backend = "fake";
    settings.synthesis_threads = *rc::gen::inRange<uint32_t>(1, 5);
    settings.partitions_in_flight = *rc::gen::inRange<uint32_t>(1, 5);
    settings.staging = *rc::gen::element(Staging::pinned, Staging::pageable);
    settings.pool_slabs = *rc::gen::inRange<uint32_t>(1, 5);
    settings.budget_bytes = uint64_t{1} << 30;
    settings.gpus = *rc::gen::inRange<uint32_t>(1, 4);
    settings.workers_per_gpu = *rc::gen::inRange<uint32_t>(1, 3);
    settings.retry_limit = *rc::gen::inRange<uint32_t>(0, 4);
    settings.fake.seed = *rc::gen::inRange<uint64_t>(1, 1'000'000);
    settings.fake.copy_error_probability = *rc::gen::inRange(0, 31) / 100.0;
    settings.fake.kernel_error_probability = *rc::gen::inRange(0, 11) / 100.0;
    settings.fake.wrong_result_probability = *rc::gen::inRange(0, 21) / 100.0;
    settings.fake.device_lost_probability = *rc::gen::inRange(0, 6) / 100.0;
    settings.fake.refuse_pinning = *rc::gen::weightedElement<bool>({{9, false}, {1, true}});
    settings.fake.copy_delay_s = *rc::gen::inRange(0, 3) / 1000.0;
    settings.fake.kernel_delay_s = *rc::gen::inRange(0, 2) / 1000.0;
    return settings;
  });
}

}  // namespace
}  // namespace zk::pipeline

namespace zkpipe::properties {

void measured_traces_keep_the_pipeline_invariants() {
  using namespace zk::pipeline;
  static const SmallKey key;
  const uint32_t partitions = *rc::gen::inRange<uint32_t>(1, 7);
  const Settings settings = *arbitrary_fake_settings();
  std::mutex mutex;
  std::map<uint32_t, int> deliveries;
  const Job job = builtin_job(*key.circuit, key.pk, partitions, 100);
  const JobReport report = run_job(job, settings, [&](const ProvedPartition& proved) {
    std::lock_guard lock(mutex);
    ++deliveries[proved.partition];
  }, {"property", nullptr});

  zkpipe::trace::RunExpectations expected;
  expected.partitions = partitions;
  expected.proved = report.proved;
  expected.failed = uint32_t(report.failed.size());
  expected.host_budget_bytes = report.partition_budget_bytes;
  expected.partitions_in_flight_max = report.settings.partitions_in_flight;
  if (report.settings.staging == Staging::pinned) expected.pool_slabs = report.settings.pool_slabs;
  expected.proofs_may_be_rejected = true;  // the engine verifies, and retries a proof that fails
  const auto violations = zkpipe::trace::check_invariants(report.trace, expected);
  if (!violations.empty()) RC_FAIL("measured trace breaks invariants:\n" + zkpipe::trace::format_violations(violations));
  RC_ASSERT(deliveries.size() == std::size_t(report.proved));
  for (const auto& [partition, times] : deliveries) RC_ASSERT(times == 1);
  RC_TAG(report.failed_attempts > 0 ? "attempts failed" : "no failed attempt");
}

}  // namespace zkpipe::properties
