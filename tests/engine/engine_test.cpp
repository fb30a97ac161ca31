// The engine without a GPU: the memory budget and pinned pool keep their promises on their own,
// and whole jobs on the fake device backend, under seeded faults, prove every partition exactly
// once (or report it failed), never over-commit pool or budget, verify every proof they hand out
// and trace each partition's phases in pipeline order. A failure names the fault seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "engine/groth16/setup.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/pipeline/engine.hpp"
#include "engine/pipeline/memory_budget.hpp"
#include "engine/pipeline/pinned_pool.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "engine/util/error.hpp"
#include "engine/util/rng.hpp"
#include "trace/sidecar.hpp"
#include "trace/trace_csv.hpp"

namespace zk::pipeline {
namespace {

using trace::Phase;

TEST(MemoryBudget, ReservationsAreReturnedAndTheBudgetIsNeverExceeded) {
  MemoryBudget budget(1000);
  {
    auto first = budget.reserve(600, "first");
    EXPECT_THROW(budget.reserve(401, "too much"), Error);
    auto second = budget.reserve(400, "second");
    EXPECT_EQ(budget.available_bytes(), 0u);
    MemoryBudget::Reservation moved = std::move(second);
    EXPECT_EQ(budget.reserved_bytes(), 1000u);
  }
  EXPECT_EQ(budget.reserved_bytes(), 0u);
  EXPECT_EQ(budget.reserved_bytes_max(), 1000u);
}

TEST(PinnedPool, SlabsAreReservedOnceAndALeaseWaitsForItsSlab) {
  MemoryBudget budget(10 * 96);
  PinnedPool pool(2, 3 * 96, budget);
  ASSERT_NE(pool.memory(), PinnedPool::Memory::none) << pool.fallback_reason();
  EXPECT_EQ(pool.memory() == PinnedPool::Memory::pinned, HostBlock::pinning_available());
  EXPECT_EQ(budget.reserved_bytes(), 2u * 3 * 96);
  std::atomic<bool> second_leased = false;
  std::optional<PinnedPool::Lease> lease = pool.lease(1);
  EXPECT_EQ(lease->elements().size(), 9u);
  std::jthread other([&] {
    auto again = pool.lease(1);
    second_leased = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(second_leased) << "slab 1 was leased twice";
  lease.reset();
  other.join();
  EXPECT_TRUE(second_leased);
  EXPECT_EQ(pool.leased_max(), 1u);
  EXPECT_THROW(pool.lease(2), std::logic_error);
}

TEST(PinnedPool, RefusedPinningLeavesNoSlabsAndReturnsTheReservation) {
  MemoryBudget budget(1000);
  PinnedPool pool(2, 300, budget, /*refuse_pinning=*/true);
  EXPECT_EQ(pool.memory(), PinnedPool::Memory::none);
  EXPECT_FALSE(pool.fallback_reason().empty());
  EXPECT_EQ(budget.reserved_bytes(), 0u);
  EXPECT_THROW(PinnedPool(4, 300, budget), Error);  // 1200 bytes do not fit a budget of 1000
}

// One small key for every engine test: poseidon-merkle (mostly 0/1 witness) at 2^10.
struct SmallKey {
  std::unique_ptr<circuits::Circuit> circuit = circuits::make_circuit({"poseidon-merkle", 1 << 10});
  groth16::ProvingKey pk = [&] {
    r1cs::R1csBuilder builder;
    circuit->synthesize(builder, 0);
    return groth16::setup(builder.take(), groth16::ToxicWaste::from_seed(3), circuit->spec());
  }();
};
const SmallKey& small_key() {
  static const SmallKey key;
  return key;
}

struct Outcome {
  JobReport report;
  std::map<uint32_t, int> deliveries;  // partition -> times the sink saw it
  std::vector<std::string> unverified;
};

Outcome run_fake_job(uint32_t partitions, Settings settings) {
  const SmallKey& key = small_key();
  Job job = builtin_job(*key.circuit, key.pk, partitions, 100);
  settings.backend = "fake";
  Outcome outcome;
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

uint64_t partition_bytes() {
  const auto& pk = small_key().pk;
  return (3 * pk.domain_size() + pk.num_vars) * sizeof(Fr);
}

// Pool and budget within their limits, every partition ended exactly once, every delivered proof
// verifies and was proved; the sink saw exactly the proved partitions.
void expect_job_invariants(const Outcome& outcome, uint32_t partitions) {
  const JobReport& report = outcome.report;
  EXPECT_TRUE(outcome.unverified.empty()) << outcome.unverified.front();
  EXPECT_EQ(report.proved + report.failed.size(), partitions);
  EXPECT_EQ(outcome.deliveries.size(), report.proved);
  for (const auto& [partition, times] : outcome.deliveries) EXPECT_EQ(times, 1) << "partition " << partition;
  for (const PartitionFailure& failure : report.failed) {
    EXPECT_FALSE(outcome.deliveries.contains(failure.partition)) << "failed partition " << failure.partition << " delivered";
    EXPECT_FALSE(failure.last_error.empty());
  }
  EXPECT_LE(report.budget_reserved_max_bytes, report.settings.budget_bytes);
  EXPECT_LE(report.partition_reserved_max_bytes, report.partition_budget_bytes);
  EXPECT_LE(report.pool_slabs_leased_max, report.settings.pool_slabs);
}

// Within one attempt (which starts at a synthesis) the partition's spans follow the pipeline's
// order and do not overlap; a proved partition's last attempt runs from synthesis through copy,
// quotient, MSMs and assembly to verification.
int phase_rank(Phase phase) {
  switch (phase) {
    case Phase::wait_budget:
    case Phase::wait_pool: return 0;
    case Phase::synth: return 1;
    case Phase::h2d: return 2;
    case Phase::ntt: return 3;
    case Phase::msm_h: return 4;
    case Phase::assemble: return 6;
    case Phase::verify: return 7;
    default: return 5;  // batch_add, msm_a, msm_b1, msm_l, msm_b2 in the prover's order
  }
}

void expect_phase_order(const JobReport& report) {
  std::map<uint32_t, std::vector<trace::Span>> by_partition;
  for (const trace::Span& span : report.trace) by_partition[span.partition].push_back(span);
  std::set<uint32_t> failed;
  for (const auto& failure : report.failed) failed.insert(failure.partition);
  for (auto& [partition, spans] : by_partition) {
    std::ranges::stable_sort(spans, [](const auto& x, const auto& y) {
      return std::pair(x.start_s, phase_rank(x.phase)) < std::pair(y.start_s, phase_rank(y.phase));
    });
    // A wait is the synthesis thread's, attributed to the partition it was then granted: it
    // ends where that partition's synthesis starts (it may overlap the partition's earlier attempt).
    for (const trace::Span& wait : spans) {
      if (phase_rank(wait.phase) != 0) continue;
      EXPECT_TRUE(std::ranges::any_of(spans, [&](const trace::Span& s) {
        return s.phase == Phase::synth && s.start_s >= wait.end_s - 1e-9 && s.start_s - wait.end_s < 0.5;
      })) << "partition " << partition << ": a wait not followed by its synthesis";
    }
    std::erase_if(spans, [](const trace::Span& s) { return phase_rank(s.phase) == 0; });
    std::vector<std::vector<const trace::Span*>> attempts;
    for (const trace::Span& span : spans) {
      const bool starts_attempt = attempts.empty() || span.phase == Phase::synth;
      if (starts_attempt) attempts.emplace_back();
      if (!attempts.back().empty()) {
        const trace::Span& previous = *attempts.back().back();
        EXPECT_LE(phase_rank(previous.phase), phase_rank(span.phase))
            << "partition " << partition << ": " << trace::phase_name(previous.phase) << " before "
            << trace::phase_name(span.phase);
        EXPECT_LE(previous.end_s, span.start_s + 1e-9) << "partition " << partition << " overlaps itself";
      }
      attempts.back().push_back(&span);
    }
    if (failed.contains(partition)) continue;
    std::set<Phase> last;
    for (const trace::Span* span : attempts.back()) last.insert(span->phase);
    for (Phase phase : {Phase::synth, Phase::h2d, Phase::ntt, Phase::msm_h, Phase::msm_a, Phase::msm_b1,
                        Phase::msm_l, Phase::msm_b2, Phase::assemble, Phase::verify})
      EXPECT_TRUE(last.contains(phase)) << "partition " << partition << " proved without " << trace::phase_name(phase);
  }
}

Settings fake_settings(uint64_t seed) {
  Settings settings;
  settings.synthesis_threads = 3;
  settings.gpus = 2;
  settings.workers_per_gpu = 2;
  settings.staging = Staging::pinned;
  settings.pool_slabs = 2;
  settings.budget_bytes = uint64_t{1} << 30;
  settings.retry_limit = 50;
  settings.fake.seed = seed;
  return settings;
}

TEST(Engine, EveryPartitionIsProvedExactlyOnceUnderInjectedFaults) {
  Settings settings = fake_settings(11);
  settings.fake.copy_error_probability = 0.15;
  settings.fake.kernel_error_probability = 0.03;
  settings.fake.wrong_result_probability = 0.1;
  settings.fake.kernel_delay_s = 0.001;
  SCOPED_TRACE(fmt::format("fault seed {}", settings.fake.seed));
  Outcome outcome = run_fake_job(8, settings);
  expect_job_invariants(outcome, 8);
  EXPECT_EQ(outcome.report.proved, 8u);
  EXPECT_GT(outcome.report.failed_attempts, 0u) << "the faults never fired: the test proves nothing";
  expect_phase_order(outcome.report);
}

TEST(Engine, ATightBudgetMakesSynthesisWaitButIsNeverExceeded) {
  Settings settings = fake_settings(12);
  settings.staging = Staging::pageable;
  settings.synthesis_threads = 4;
  settings.fake.copy_delay_s = 0.02;
  const auto& pk = small_key().pk;
  const uint64_t worker_bytes = (pk.domain_size() + pk.num_vars + 3 * pk.domain_size()) * sizeof(Fr);
  settings.budget_bytes = pk.bytes() + 4 * worker_bytes + 2 * partition_bytes();  // two partitions in flight
  Outcome outcome = run_fake_job(8, settings);
  expect_job_invariants(outcome, 8);
  EXPECT_EQ(outcome.report.proved, 8u);
  EXPECT_EQ(outcome.report.partition_reserved_max_bytes, 2 * partition_bytes());
  const bool waited = std::ranges::any_of(outcome.report.trace, [](const auto& s) { return s.phase == Phase::wait_budget; });
  EXPECT_TRUE(waited);
  expect_phase_order(outcome.report);
}

TEST(Engine, OneSlabSerializesSynthesisThroughThePool) {
  Settings settings = fake_settings(13);
  settings.pool_slabs = 1;
  settings.fake.copy_delay_s = 0.01;
  Outcome outcome = run_fake_job(6, settings);
  expect_job_invariants(outcome, 6);
  EXPECT_EQ(outcome.report.pool_slabs_leased_max, 1u);
  const bool waited = std::ranges::any_of(outcome.report.trace, [](const auto& s) { return s.phase == Phase::wait_pool; });
  EXPECT_TRUE(waited);
  expect_phase_order(outcome.report);
}

TEST(Engine, ExhaustedRetriesAreReportedAndNothingIsDelivered) {
  Settings settings = fake_settings(14);
  settings.retry_limit = 1;
  settings.fake.kernel_error_probability = 1;
  Outcome outcome = run_fake_job(4, settings);
  expect_job_invariants(outcome, 4);
  ASSERT_EQ(outcome.report.failed.size(), 4u);
  EXPECT_EQ(outcome.report.failed_attempts, 8u);  // two attempts each
  for (const auto& failure : outcome.report.failed) {
    EXPECT_EQ(failure.failed_attempts, 2u);
    EXPECT_NE(failure.last_error.find("fault seed 14"), std::string::npos) << failure.last_error;
  }
}

TEST(Engine, WrongResultsAreCaughtByVerificationAndNeverDelivered) {
  Settings settings = fake_settings(15);
  settings.retry_limit = 0;
  settings.fake.wrong_result_probability = 1;
  Outcome outcome = run_fake_job(3, settings);
  expect_job_invariants(outcome, 3);
  EXPECT_EQ(outcome.report.proved, 0u);
  for (const auto& failure : outcome.report.failed)
    EXPECT_NE(failure.last_error.find("did not verify"), std::string::npos) << failure.last_error;
}

TEST(Engine, LostDevicesHandTheirPartitionsToTheRest) {
  for (uint64_t seed = 20; seed < 23; ++seed) {
    Settings settings = fake_settings(seed);
    settings.fake.device_lost_probability = 0.02;
    SCOPED_TRACE(fmt::format("fault seed {}", seed));
    Outcome outcome = run_fake_job(8, settings);
    expect_job_invariants(outcome, 8);
    if (outcome.report.workers_lost.size() < 4) {
      EXPECT_EQ(outcome.report.proved, 8u);
    }
    expect_phase_order(outcome.report);
  }
}

TEST(Engine, EveryDeviceLostFailsTheRestWithoutHanging) {
  Settings settings = fake_settings(30);
  settings.fake.device_lost_probability = 1;
  Outcome outcome = run_fake_job(5, settings);
  expect_job_invariants(outcome, 5);
  EXPECT_EQ(outcome.report.workers_lost.size(), 4u);
  EXPECT_EQ(outcome.report.failed.size(), 5u);
}

TEST(Engine, RefusedPinningFallsBackToPageableStaging) {
  Settings settings = fake_settings(31);
  settings.fake.refuse_pinning = true;
  Outcome outcome = run_fake_job(4, settings);
  expect_job_invariants(outcome, 4);
  EXPECT_EQ(outcome.report.proved, 4u);
  EXPECT_EQ(outcome.report.settings.staging, Staging::pageable);
  EXPECT_EQ(outcome.report.staging_memory, "pageable");
  EXPECT_EQ(outcome.report.pool_slabs_leased_max, 0u);
}

// Random settings and faults, seeded: the invariants hold for every one.
TEST(Engine, InvariantsHoldForRandomSettingsAndFaults) {
  for (uint64_t seed = 100; seed < 108; ++seed) {
    Rng random(seed);
    Settings settings;
    settings.synthesis_threads = 1 + uint32_t(random.below(4));
    settings.gpus = 1 + uint32_t(random.below(2));
    settings.workers_per_gpu = 1 + uint32_t(random.below(3));
    settings.staging = random.below(2) ? Staging::pinned : Staging::pageable;
    settings.pool_slabs = 1 + uint32_t(random.below(3));
    settings.partitions_in_flight = 1 + uint32_t(random.below(5));
    settings.budget_bytes = uint64_t{1} << 30;
    settings.retry_limit = uint32_t(random.below(4));
    settings.fake.seed = seed;
    settings.fake.copy_error_probability = 0.1 * double(random.below(3));
    settings.fake.kernel_error_probability = 0.01 * double(random.below(3));
    settings.fake.wrong_result_probability = 0.1 * double(random.below(2));
    settings.fake.device_lost_probability = 0.01 * double(random.below(2));
    const uint32_t partitions = 1 + uint32_t(random.below(8));
    SCOPED_TRACE(fmt::format("fault seed {}: {} partitions; {}", seed, partitions, describe(settings)));
    Outcome outcome = run_fake_job(partitions, settings);
    expect_job_invariants(outcome, partitions);
    expect_phase_order(outcome.report);
  }
}

// What calibration reads: the CSV round-trips, and the sidecar states the copies' staging memory
// and a positive idle staging rate (machine.pcie_h2d_gbps).
TEST(Engine, TraceFilesCarryWhatCalibrationReads) {
  Settings settings = fake_settings(41);
  Outcome outcome = run_fake_job(3, settings);
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("zkpipe-engine-trace-{}", ::getpid());
  const SmallKey& key = small_key();
  write_trace_files(dir, builtin_job(*key.circuit, key.pk, 3, 100), outcome.report);
  const trace::Trace read = trace::read_csv_file(dir / "trace.csv");
  EXPECT_EQ(read.size(), outcome.report.trace.size());
  const trace::Sidecar sidecar = trace::read_sidecar(trace::sidecar_path_for(dir / "trace.csv"));
  EXPECT_EQ(sidecar.source, trace::Source::measured);
  EXPECT_EQ(sidecar.settings.value("staging", ""), outcome.report.staging_memory);
  EXPECT_GT(sidecar.machine.value("pcie_h2d_gbps", 0.0), 0.0);
  EXPECT_TRUE(std::filesystem::exists(dir / "trace.perfetto.json"));
  std::filesystem::remove_all(dir);
}

TEST(Engine, SettingsThatCannotWorkAreRefusedWithTheirName) {
  Settings settings = fake_settings(40);
  settings.budget_bytes = 1000;
  EXPECT_THROW(run_fake_job(2, settings), Error);
  settings = fake_settings(40);
  settings.workers_per_gpu = 0;
  EXPECT_THROW(run_fake_job(2, settings), Error);
}

}  // namespace
}  // namespace zk::pipeline
