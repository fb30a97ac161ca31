// The engine without a GPU: the memory budget and pinned pool keep their promises on their own,
// and whole jobs on the fake device backend, under faults drawn from the one seeded fault source
// (faults::FaultInjector), prove every partition exactly once (or report it failed), never
// over-commit pool or budget, verify every proof they hand out and keep the shared trace
// invariants; the same seed replays the same faults and outcomes whatever the threads do. A
// failure names the fault seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/groth16/prover.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/pipeline/engine.hpp"
#include "engine/pipeline/memory_budget.hpp"
#include "engine/pipeline/pinned_pool.hpp"
#include "engine/util/error.hpp"
#include "engine/util/machine.hpp"
#include "engine/util/rng.hpp"
#include "fake_job.hpp"
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

TEST(PinnedPool, PoolsOfOneSizeKeepTheirOwnHighWaterMarks) {
  MemoryBudget budget(4 * 96);
  PinnedPool pool(4, 96, budget, /*refuse_pinning=*/false, /*pools=*/2);  // slabs {0, 1} and {2, 3}
  ASSERT_NE(pool.memory(), PinnedPool::Memory::none) << pool.fallback_reason();
  const PinnedPool::Lease first = pool.lease(0), second = pool.lease(1), third = pool.lease(3);
  EXPECT_EQ(second.pool(), 0u);
  EXPECT_EQ(third.pool(), 1u);
  EXPECT_EQ(pool.leased_max(), 3u);
  EXPECT_EQ(pool.leased_max(0), 2u);
  EXPECT_EQ(pool.leased_max(1), 1u);
  MemoryBudget other(1000);
  EXPECT_THROW(PinnedPool(3, 96, other, false, 2), std::logic_error);
}

using testing::FakeJobOutcome;
using testing::partition_bytes;
using testing::run_fake_job;
using testing::small_key;

// Every promise of the run (fake_job.hpp: the shared trace checker and what the trace cannot
// show); a failure prints each broken one and the fault seed.
#define EXPECT_JOB_KEEPS_ITS_PROMISES(outcome)                                  \
  EXPECT_TRUE(testing::job_violations(outcome).empty())                        \
      << "fault seed " << (outcome).report.settings.fake.faults.seed << ":\n" \
      << testing::format_lines(testing::job_violations(outcome))

Settings fake_settings(uint64_t seed) {
  Settings settings;
  settings.synthesis_threads = 3;
  settings.gpus = 2;
  settings.workers_per_gpu = 2;
  settings.staging = Staging::pinned;
  settings.pool_slabs = 2;
  settings.host_budget_bytes = uint64_t{1} << 30;
  settings.retry_limit = 50;
  settings.fake.faults.seed = seed;
  return settings;
}

// Eight partitions from `base` with workers dying at `death_probability`, under fault seeds
// first_seed .. first_seed + 2: every promise kept, and all proved unless every worker died.
void expect_lost_devices_handled(Settings base, uint64_t first_seed, double death_probability) {
  for (uint64_t seed = first_seed; seed < first_seed + 3; ++seed) {
    Settings settings = base;
    settings.fake.faults.seed = seed;
    settings.fake.faults.worker_death_probability = death_probability;
    SCOPED_TRACE(fmt::format("fault seed {}", seed));
    FakeJobOutcome outcome = run_fake_job(8, settings);
    EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
    if (outcome.report.workers_lost.size() < settings.gpus * settings.workers_per_gpu) {
      EXPECT_EQ(outcome.report.proved, 8u);
    }
  }
}

TEST(Engine, EveryPartitionIsProvedExactlyOnceUnderInjectedFaults) {
  Settings settings = fake_settings(11);
  settings.fake.faults.stalled_transfer_probability = 0.15;
  settings.fake.faults.gpu_error_probability = 0.03;
  settings.fake.faults.wrong_result_probability = 0.1;
  settings.fake.kernel_delay_s = 0.001;
  SCOPED_TRACE(fmt::format("fault seed {}", settings.fake.faults.seed));
  FakeJobOutcome outcome = run_fake_job(8, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.proved, 8u);
  EXPECT_GT(outcome.report.failed_attempts, 0u) << "the faults never fired: the test proves nothing";
}

TEST(Engine, ATightBudgetMakesSynthesisWaitButIsNeverExceeded) {
  Settings settings = fake_settings(12);
  settings.staging = Staging::pageable;
  settings.synthesis_threads = 4;
  settings.fake.copy_delay_s = 0.02;
  // What the key and the workers' buffers hold, as the engine reserves it (a run with room to
  // spare says: budget - partition budget), plus two partitions in flight.
  const JobReport roomy = run_fake_job(1, settings).report;
  settings.host_budget_bytes = roomy.settings.host_budget_bytes - roomy.admission.host_budget_bytes + 2 * partition_bytes();
  FakeJobOutcome outcome = run_fake_job(8, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.proved, 8u);
  EXPECT_EQ(outcome.report.partition_reserved_max_bytes, 2 * partition_bytes());
  const bool waited = std::ranges::any_of(outcome.report.trace, [](const auto& s) { return s.phase == Phase::wait_budget; });
  EXPECT_TRUE(waited);
}

TEST(Engine, OneSlabSerializesSynthesisThroughThePool) {
  Settings settings = fake_settings(13);
  settings.pool_slabs = 1;
  settings.fake.copy_delay_s = 0.01;
  FakeJobOutcome outcome = run_fake_job(6, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.pool_slabs_leased_max, 1u);
  const bool waited = std::ranges::any_of(outcome.report.trace, [](const auto& s) { return s.phase == Phase::wait_pool; });
  EXPECT_TRUE(waited);
}

// Two GPUs with a pool of one slab each: both slabs are held at once (a single pool of one slab
// never allows it), each GPU copies only from its own pool (the engine ends the job otherwise) and
// no pool leases more than its slab.
TEST(Engine, PerGpuPoolsGiveEachGpuItsOwnSlabs) {
  Settings settings = fake_settings(16);
  settings.pool_layout = PoolLayout::per_gpu;
  settings.pool_slabs = 1;
  settings.workers_per_gpu = 1;
  settings.fake.copy_delay_s = 0.05;
  FakeJobOutcome outcome = run_fake_job(6, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.proved, 6u);
  EXPECT_EQ(outcome.report.pool_slabs_leased_max_by_pool, (std::vector<uint32_t>{1, 1}));
  EXPECT_EQ(outcome.report.pool_slabs_leased_max, 2u);
  std::set<std::string> copy_links;
  for (const trace::Span& span : outcome.report.trace)
    if (span.phase == Phase::h2d) copy_links.insert(span.resource);
  EXPECT_EQ(copy_links, (std::set<std::string>{"pcie0:h2d", "pcie1:h2d"}));
}

TEST(Engine, PerGpuPoolsSurviveLostDevices) {
  Settings settings = fake_settings(0);
  settings.pool_layout = PoolLayout::per_gpu;
  settings.pool_slabs = 1;
  expect_lost_devices_handled(settings, 24, 0.1);
}

TEST(Engine, PerGpuPoolsAreSizedPerGpuWithinTheBudget) {
  const JobSizes shape{8, 1000, 0, 0};
  const MachineFacts machine{.cores = 4, .available_memory_bytes = 0, .cuda_devices = 0};
  Settings settings;
  settings.backend = "fake";
  settings.gpus = 3;
  settings.staging = Staging::pinned;
  settings.pool_layout = PoolLayout::per_gpu;
  settings.partitions_in_flight = 7;
  settings.host_budget_bytes = 100'000;
  const Settings resolved = resolve_settings(settings, shape, machine);
  EXPECT_EQ(resolved.pool_slabs, 3u);  // 7 in flight over 3 GPUs
  EXPECT_NE(describe(resolved).find("3 pinned slabs per GPU"), std::string::npos) << describe(resolved);
  EXPECT_EQ(nlohmann::json(run_settings(resolved)).value("pool_layout", ""), "per-gpu");
  const uint32_t workers = settings.gpus * settings.workers_per_gpu;
  settings.host_budget_bytes = workers * worker_host_bytes(shape, "fake", Staging::pinned) + 8 * shape.partition_host_bytes();
  settings.pool_slabs = 3;  // 9 slabs in all, room for 8 partitions next to the workers' buffers
  try {
    resolve_settings(settings, shape, machine);
    FAIL() << "9 slabs were given a budget for 8";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--pool-slabs 3 per GPU x 3 GPUs"), std::string::npos) << e.what();
  }
}

TEST(Engine, ExhaustedRetriesAreReportedAndNothingIsDelivered) {
  Settings settings = fake_settings(14);
  settings.retry_limit = 1;
  settings.fake.faults.gpu_error_probability = 1;
  FakeJobOutcome outcome = run_fake_job(4, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
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
  settings.fake.faults.wrong_result_probability = 1;
  FakeJobOutcome outcome = run_fake_job(3, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.proved, 0u);
  for (const auto& failure : outcome.report.failed)
    EXPECT_NE(failure.last_error.find("did not verify"), std::string::npos) << failure.last_error;
}

TEST(Engine, LostDevicesHandTheirPartitionsToTheRest) { expect_lost_devices_handled(fake_settings(0), 20, 0.02); }

TEST(Engine, EveryDeviceLostFailsTheRestWithoutHanging) {
  Settings settings = fake_settings(30);
  settings.fake.faults.worker_death_probability = 1;
  FakeJobOutcome outcome = run_fake_job(5, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.workers_lost.size(), 4u);
  EXPECT_EQ(outcome.report.failed.size(), 5u);
}

TEST(Engine, RefusedPinningFallsBackToPageableStaging) {
  Settings settings = fake_settings(31);
  settings.fake.faults.pinned_allocation_failure_probability = 1;
  FakeJobOutcome outcome = run_fake_job(4, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
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
    settings.host_budget_bytes = uint64_t{1} << 30;
    settings.retry_limit = uint32_t(random.below(4));
    settings.fake.faults.seed = seed;
    settings.fake.faults.stalled_transfer_probability = 0.1 * double(random.below(3));
    settings.fake.faults.gpu_error_probability = 0.01 * double(random.below(3));
    settings.fake.faults.wrong_result_probability = 0.1 * double(random.below(2));
    settings.fake.faults.worker_death_probability = 0.01 * double(random.below(2));
    const uint32_t partitions = 1 + uint32_t(random.below(8));
    SCOPED_TRACE(fmt::format("fault seed {}: {} partitions; {}", seed, partitions, describe(settings)));
    FakeJobOutcome outcome = run_fake_job(partitions, settings);
    EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  }
}

// The faults that decide outcomes are keyed by (partition, attempt), so the same seed gives the
// same faults and the same partition outcomes however many threads and workers interleave; a
// different seed gives others. (Device losses are keyed by worker too, and which worker takes
// which attempt is timing: they are left out here.)
Settings replayable_faults(uint64_t seed) {
  Settings settings = fake_settings(seed);
  settings.retry_limit = 1;
  settings.fake.copy_delay_s = 0.001;
  settings.fake.faults.stalled_transfer_probability = 0.2;
  settings.fake.faults.slow_transfer_probability = 0.3;
  settings.fake.faults.slow_transfer_factor = 3;
  settings.fake.faults.gpu_error_probability = 0.15;
  settings.fake.faults.wrong_result_probability = 0.15;
  settings.fake.faults.pinned_allocation_failure_probability = 0.5;
  return settings;
}

std::vector<uint32_t> failed_partitions(const JobReport& report) {
  std::vector<uint32_t> failed;
  for (const PartitionFailure& failure : report.failed) failed.push_back(failure.partition);
  std::ranges::sort(failed);
  return failed;
}

TEST(Engine, TheSameSeedReplaysTheSameFaultsAndOutcomesInAnyInterleaving) {
  constexpr uint32_t partitions = 10;
  Settings serial = replayable_faults(61);
  serial.synthesis_threads = 1, serial.gpus = 1, serial.workers_per_gpu = 1, serial.pool_slabs = 1;
  const Settings parallel = replayable_faults(61);  // 3 threads, 2 GPUs x 2 workers
  const FakeJobOutcome first = run_fake_job(partitions, serial);
  const FakeJobOutcome second = run_fake_job(partitions, parallel);
  const FakeJobOutcome third = run_fake_job(partitions, parallel);
  for (const FakeJobOutcome* run : {&first, &second, &third}) EXPECT_JOB_KEEPS_ITS_PROMISES(*run);
  const auto counts = [](const FakeJobOutcome& run) { return zkpipe::faults::format_fault_counts(run.report.faults_injected); };
  SCOPED_TRACE(fmt::format("fault seed 61; serial: {}", counts(first)));
  EXPECT_GT(first.report.failed_attempts, 0u) << "no attempt failed: the test proves nothing";
  EXPECT_GT(first.report.faults_injected.slow_transfers, 0u);
  for (const FakeJobOutcome* run : {&second, &third}) {
    EXPECT_EQ(counts(*run), counts(first));
    EXPECT_EQ(run->report.failed_attempts_by_partition, first.report.failed_attempts_by_partition);
    EXPECT_EQ(failed_partitions(run->report), failed_partitions(first.report));
    EXPECT_EQ(run->report.proved, first.report.proved);
    EXPECT_EQ(run->report.staging_memory, first.report.staging_memory);
  }
  const FakeJobOutcome other_seed = run_fake_job(partitions, replayable_faults(62));
  EXPECT_JOB_KEEPS_ITS_PROMISES(other_seed);
  EXPECT_NE(std::pair(other_seed.report.failed_attempts_by_partition, counts(other_seed)),
            std::pair(first.report.failed_attempts_by_partition, counts(first)))
      << "seeds 61 and 62 drew the same faults";
}

// Each fault site of the fake device fires where its probability is 1, counted by the injector.
TEST(Engine, EachFakeDeviceFaultComesFromTheInjectorAndIsCounted) {
  Settings settings = fake_settings(71);
  settings.retry_limit = 0;
  settings.fake.faults.stalled_transfer_probability = 1;
  FakeJobOutcome outcome = run_fake_job(3, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.faults_injected.stalled_transfers, 3u);
  EXPECT_EQ(outcome.report.failed.size(), 3u);
  EXPECT_NE(outcome.report.failed.front().last_error.find("injected copy error"), std::string::npos)
      << outcome.report.failed.front().last_error;

  settings.fake.faults.stalled_transfer_probability = 0;
  settings.fake.faults.slow_transfer_probability = 1;
  settings.fake.faults.pinned_allocation_failure_probability = 1;
  outcome = run_fake_job(3, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.proved, 3u);
  EXPECT_EQ(outcome.report.faults_injected.slow_transfers, 3u);
  EXPECT_EQ(outcome.report.faults_injected.pinned_allocation_failures, 1u);
  EXPECT_EQ(outcome.report.faults_injected.total(), 4u);
  EXPECT_NE(format_report(outcome.report).find("fake device faults injected 4"), std::string::npos)
      << format_report(outcome.report);
  // the fake device is no GPU: its closing report says so
  EXPECT_NE(format_report(outcome.report).find("device utilization"), std::string::npos);
  EXPECT_EQ(format_report(outcome.report).find("GPU utilization"), std::string::npos);
}

TEST(Engine, FaultProbabilitiesOutsideZeroAndOneAreRefusedByName) {
  Settings settings = fake_settings(72);
  settings.fake.faults.gpu_error_probability = 1.5;
  try {
    run_fake_job(1, settings);
    FAIL() << "a probability of 1.5 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_error_probability"), std::string::npos) << e.what();
  }
}

// What calibration reads: the CSV round-trips, and the sidecar states the copies' staging memory
// and a positive idle staging rate (machine.pcie_h2d_gbps).
TEST(Engine, TraceFilesCarryWhatCalibrationReads) {
  Settings settings = fake_settings(41);
  FakeJobOutcome outcome = run_fake_job(3, settings);
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("zkpipe-engine-trace-{}", ::getpid());
  const testing::SmallKey& key = small_key();
  write_trace_files(dir, builtin_job(*key.circuit, key.pk, 3, 100), outcome.report);
  const trace::Trace read = trace::read_csv_file(dir / "trace.csv");
  EXPECT_EQ(read.size(), outcome.report.trace.size());
  const trace::Sidecar sidecar = trace::read_sidecar(trace::sidecar_path_for(dir / "trace.csv"));
  EXPECT_EQ(sidecar.source, trace::Source::measured);
  EXPECT_EQ(sidecar.settings.copies_staging, zkpipe::policy::parse_staging(outcome.report.staging_memory));
  EXPECT_EQ(sidecar.settings.synthesis_core_share, zkpipe::policy::SynthesisCoreShare::pooled);
  ASSERT_TRUE(sidecar.settings.outcome);
  EXPECT_EQ(sidecar.settings.outcome->proved, outcome.report.proved);
  EXPECT_GT(sidecar.machine.pcie_h2d_gbps.value_or(0.0), 0.0);
  EXPECT_TRUE(std::filesystem::exists(dir / "trace.perfetto.json"));
  std::filesystem::remove_all(dir);
}

// A fake device too small for the key and two workers per GPU: the job runs one worker per GPU
// beside the key; smaller still (its default budget, 90 % of the fake device), the key's points
// stream from host memory and both workers run; smaller than one worker, the job is refused
// naming the sizes. Each run proves every partition within the plan's bytes.
TEST(Engine, TheDeviceMemoryPlanFitsTheJobIntoASmallFakeDevice) {
  const uint64_t key = small_key().pk.msm_point_bytes(), worker = partition_bytes();
  Settings settings = fake_settings(43);
  settings.device_budget_bytes = key + worker + worker / 2;
  FakeJobOutcome outcome = run_fake_job(6, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.proved, 6u);
  EXPECT_EQ(outcome.report.settings.workers_per_gpu, 1u);
  EXPECT_EQ(outcome.report.settings.srs_residency, SrsResidency::device);
  EXPECT_EQ(outcome.report.device_bytes_planned, key + worker);

  settings = fake_settings(44);
  settings.fake.device_memory_bytes = (key / 2 + 2 * worker) / 9 * 10;
  outcome = run_fake_job(6, settings);
  EXPECT_JOB_KEEPS_ITS_PROMISES(outcome);
  EXPECT_EQ(outcome.report.proved, 6u);
  EXPECT_EQ(outcome.report.settings.device_budget_bytes, settings.fake.device_memory_bytes / 10 * 9);
  EXPECT_EQ(outcome.report.settings.workers_per_gpu, 2u);
  EXPECT_EQ(outcome.report.settings.srs_residency, SrsResidency::pinned_host);
  EXPECT_EQ(outcome.report.device_bytes_planned, 2 * worker);

  settings = fake_settings(45);
  settings.device_budget_bytes = worker / 2;
  try {
    run_fake_job(2, settings);
    FAIL() << "a device budget of half a worker was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot hold one worker"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(format_bytes(double(worker))), std::string::npos) << e.what();
  }
}

const zkpipe::policy::FixedBaseTable fake_h_table{zkpipe::policy::KeyArray::h, 1};

// fake_settings(seed) on the fake device offering h's table to the device-memory plan, tables on.
Settings fake_settings_with_a_table(uint64_t seed) {
  Settings settings = fake_settings(seed);
  settings.backend = "fake";
  settings.fake.device_memory_bytes = uint64_t{1} << 30;
  settings.fake.fixed_bases = {{.table = fake_h_table, .table_bytes = 1024, .build_s = 0.001, .saving_s = 0.01}};
  settings.fixed_bases = zkpipe::policy::FixedBaseTables::on;
  return settings;
}

// Where a fixed-base table may be built, the engine makes partition 0's witness before proving, to
// estimate the tables' savings for its scalars; partition 0's synthesis makes it again, whole (its
// span has items, as every other's), and each proof verifies for its own witness's public inputs.
// The GPU stage alone replays the estimates' witness: made once, for every partition.
TEST(Engine, PartitionZeroIsSynthesizedWholeWhereTheTablesAreEstimated) {
  const testing::SmallKey& key = small_key();
  constexpr uint32_t partitions = 3;
  Job job = builtin_job(*key.circuit, key.pk, partitions, 100);
  std::array<std::atomic<int>, partitions> made{};
  job.witness = [&made, witness = job.witness](uint32_t partition) {
    ++made.at(partition);
    return witness(partition);
  };
  Settings settings = fake_settings_with_a_table(46);
  std::mutex mutex;
  std::vector<std::string> wrong;
  const JobReport report = run_job(job, settings, [&](const ProvedPartition& proved) {
    const std::vector<Fr> z = groth16::witness_of(*key.circuit, 100 + proved.partition, key.pk);
    const bool own_publics = std::ranges::equal(proved.public_inputs, std::span(z).subspan(1, key.pk.num_public));
    const bool verified = bool(groth16::verify(key.pk.verifying_key(), proved.proof, proved.public_inputs));
    std::lock_guard lock(mutex);
    if (!own_publics || !verified)
      wrong.push_back(fmt::format("partition {}: {}", proved.partition, own_publics ? "does not verify" : "another witness's publics"));
  }, {"test", nullptr});
  EXPECT_EQ(report.proved, partitions);
  EXPECT_EQ(report.fixed_bases, std::vector{fake_h_table});
  EXPECT_TRUE(wrong.empty()) << fmt::format("{}", fmt::join(wrong, "; "));
  for (uint32_t p = 0; p < partitions; ++p) EXPECT_EQ(made[p], p == 0 ? 2 : 1) << "partition " << p;
  for (const trace::Span& span : report.trace) {
    if (span.phase != Phase::synth) continue;
    EXPECT_EQ(span.items, key.pk.num_constraints) << "partition " << span.partition;
  }

  // The GPU stage alone replays that one witness for every partition.
  for (auto& count : made) count = 0;
  settings.stage_alone = StageAlone::gpu;
  EXPECT_EQ(run_job(job, settings, [](const ProvedPartition&) {}, {"test", nullptr}).proved, partitions);
  EXPECT_EQ(made[0], 1);
  EXPECT_EQ(made[1] + made[2], 0);
}

// A partition 0 whose witness cannot be made fails alone, with the witness's error, where the
// tables' estimates asked for that witness first.
TEST(Engine, AFirstWitnessThatCannotBeMadeFailsItsPartitionAlone) {
  const testing::SmallKey& key = small_key();
  Job job = builtin_job(*key.circuit, key.pk, 3, 100);
  job.witness = [witness = job.witness](uint32_t partition) {
    if (partition == 0) fail("partition 0's witness file is unreadable");
    return witness(partition);
  };
  Settings settings = fake_settings_with_a_table(47);
  settings.retry_limit = 2;
  const JobReport report = run_job(job, settings, [](const ProvedPartition&) {}, {"test", nullptr});
  EXPECT_EQ(report.proved, 2u);
  ASSERT_EQ(report.failed.size(), 1u);
  EXPECT_EQ(report.failed[0].partition, 0u);
  EXPECT_NE(report.failed[0].last_error.find("unreadable"), std::string::npos) << report.failed[0].last_error;
}

TEST(Engine, SettingsThatCannotWorkAreRefusedWithTheirName) {
  Settings settings = fake_settings(40);
  settings.host_budget_bytes = 1000;
  EXPECT_THROW(run_fake_job(2, settings), Error);
  settings = fake_settings(40);
  settings.workers_per_gpu = 0;
  EXPECT_THROW(run_fake_job(2, settings), Error);
}

}  // namespace
}  // namespace zk::pipeline
