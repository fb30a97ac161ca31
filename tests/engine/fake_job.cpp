#include "fake_job.hpp"

#include <mutex>
#include <set>

#include <fmt/format.h>

#include "engine/groth16/setup.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "trace/invariants.hpp"

namespace zk::pipeline::testing {

SmallKey make_small_key(uint64_t constraints) {
  SmallKey made;
  made.circuit = circuits::make_circuit({"poseidon-merkle", constraints});
  r1cs::R1csBuilder builder;
  made.circuit->synthesize(builder, 0);
  made.pk = groth16::setup(builder.take(), groth16::ToxicWaste::from_seed(3), made.circuit->spec());
  return made;
}

const SmallKey& small_key() {
  static const SmallKey key = make_small_key(1 << 10);
  return key;
}

uint64_t partition_bytes() {
  const auto& pk = small_key().pk;
  return (3 * pk.domain_size() + pk.num_vars) * sizeof(Fr);
}

FakeJobOutcome run_fake_job(uint32_t partitions, Settings settings) {
  settings.backend = "fake";
  return run_recorded_job(small_key(), partitions, settings);
}

FakeJobOutcome run_recorded_job(const SmallKey& key, uint32_t partitions, const Settings& settings) {
  const Job job = builtin_job(*key.circuit, key.pk, partitions, 100);
  FakeJobOutcome outcome;
  std::mutex mutex;
  auto sink = [&](const ProvedPartition& proved) {
    std::lock_guard lock(mutex);
    ++outcome.deliveries[proved.partition];
    auto verdict = groth16::verify(key.pk.verifying_key(), proved.proof, proved.public_inputs);
    if (!verdict) outcome.unverified.push_back(fmt::format("partition {}: {}", proved.partition, verdict.reason));
  };
  outcome.report = run_job(job, settings, sink, {"test", nullptr});
  return outcome;
}

std::vector<std::string> job_violations(const FakeJobOutcome& outcome) {
  const JobReport& report = outcome.report;
  std::vector<std::string> broken;
  for (const auto& violation : zkpipe::trace::check_invariants(report.trace, trace_expectations(report)))
    broken.push_back(fmt::format("trace: {}: {}", zkpipe::trace::invariant_name(violation.invariant), violation.detail));
  for (const std::string& line : outcome.unverified) broken.push_back("delivered proof does not verify: " + line);
  if (report.proved + report.failed.size() != report.partitions)
    broken.push_back(fmt::format("{} proved + {} failed != {} partitions", report.proved, report.failed.size(),
                                 report.partitions));
  if (outcome.deliveries.size() != report.proved)
    broken.push_back(fmt::format("the sink saw {} partitions, {} proved", outcome.deliveries.size(), report.proved));
  for (const auto& [partition, times] : outcome.deliveries)
    if (times != 1) broken.push_back(fmt::format("partition {} delivered {} times", partition, times));
  std::set<uint32_t> failed;
  for (const PartitionFailure& failure : report.failed) {
    failed.insert(failure.partition);
    if (outcome.deliveries.contains(failure.partition))
      broken.push_back(fmt::format("failed partition {} was delivered", failure.partition));
    if (failure.last_error.empty()) broken.push_back(fmt::format("failed partition {} says not why", failure.partition));
  }
  if (report.budget_reserved_max_bytes > report.settings.host_budget_bytes)
    broken.push_back(fmt::format("budget high-water {} > budget {}", report.budget_reserved_max_bytes,
                                 report.settings.host_budget_bytes));
  if (report.partition_reserved_max_bytes > report.admission.host_budget_bytes)
    broken.push_back(fmt::format("partitions reserved {} > their budget {}", report.partition_reserved_max_bytes,
                                 report.admission.host_budget_bytes));
  for (size_t pool = 0; pool < report.pool_slabs_leased_max_by_pool.size(); ++pool)
    if (report.pool_slabs_leased_max_by_pool[pool] > report.settings.pool_slabs)
      broken.push_back(fmt::format("{} slabs leased > pool {} of {}", report.pool_slabs_leased_max_by_pool[pool], pool,
                                   report.settings.pool_slabs));

  using trace::Phase;
  std::map<uint32_t, std::set<Phase>> phases;
  for (const trace::Span& span : report.trace) phases[span.partition].insert(span.phase);
  if (report.settings.stage_alone == StageAlone::none)
    for (uint32_t partition = 0; partition < report.partitions; ++partition) {
      if (failed.contains(partition)) continue;
      for (Phase phase : {Phase::synth, Phase::h2d, Phase::ntt, Phase::msm_h, Phase::msm_a, Phase::msm_b1,
                          Phase::msm_l, Phase::msm_b2, Phase::assemble, Phase::verify})
        if (!phases[partition].contains(phase))
          broken.push_back(fmt::format("partition {} proved without {}", partition, trace::phase_name(phase)));
    }

  if (injects_faults(report.settings.backend)) {
    const zkpipe::faults::FaultCounts& f = report.faults_injected;
    const uint64_t failing_faults = f.stalled_transfers + f.gpu_errors + f.wrong_results + f.device_allocation_failures;
    if (report.failed_attempts != failing_faults)
      broken.push_back(fmt::format("{} failed attempts but {} injected faults that fail one ({})", report.failed_attempts,
                                   failing_faults, zkpipe::faults::format_fault_counts(f)));
    // On faulty-cuda a sticky error (worker_deaths) reaches every context of the process (the
    // H200's driver 580): it loses its worker and may lose any other; the fake device loses one.
    const uint64_t lost = report.workers_lost.size(), injected = f.worker_deaths + f.device_resets;
    const bool sticky_spreads = report.settings.backend == "faulty-cuda" && f.worker_deaths > 0;
    if (sticky_spreads ? lost < injected : lost != injected)
      broken.push_back(fmt::format("{} workers lost but {} device losses and resets injected{}", lost, injected,
                                   sticky_spreads ? " (a sticky error loses at least its own worker)" : ""));
  }
  return broken;
}

std::string format_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace zk::pipeline::testing
