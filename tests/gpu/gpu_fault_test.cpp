// gpu_fault_test.cpp — the engine on the real GPU with faults injected at real CUDA points
// (engine/pipeline/faulty_cuda_backend.hpp): jobs of 24 partitions per fault kind and a mix, each
// checked for every promise the engine makes (tests/engine/fake_job.hpp: every partition proved
// exactly once with a verified proof or reported failed, none lost or duplicated; every failed
// attempt and lost worker an injected fault), with faults of each kind injected, and the device
// memory given back when the job ends. On two backends directly: a reset of one worker's context
// leaves the other proving. A sticky error (illegal address) made every CUDA context of the process
// unusable on the H200 (driver 580.159.04), the test's own too, so those tests come last, in their
// own suite, without memory checks (ctest runs each test in a process of its own). Each job prints
// one line of outcomes (the figures of the README). Skips without a GPU.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "engine/groth16/prover.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/pipeline/faulty_cuda_backend.hpp"
#include "engine/util/rng.hpp"
#include "fake_job.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace zk::pipeline {
namespace {

using testing::FakeJobOutcome;
using testing::SmallKey;

constexpr uint32_t job_partitions = 24;

const SmallKey& gpu_key() {
  static const SmallKey key = testing::make_small_key(1 << 13);
  return key;
}

// Bytes of this process's mappings of the NVIDIA device files: its page-locked host memory among them.
size_t nvidia_mapped_bytes() {
  std::ifstream maps("/proc/self/maps");
  size_t bytes = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/dev/nvidia") == std::string::npos) continue;
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) == 2) bytes += end - begin;
  }
  return bytes;
}

Settings faulty_settings(uint64_t seed, uint32_t workers = 2) {
  Settings settings;
  settings.backend = "faulty-cuda";
  settings.workers_per_gpu = workers;
  settings.gpus = 1;
  settings.synthesis_threads = 4;
  settings.retry_limit = 3;
  settings.staging = Staging::pinned;
  settings.fake.faults.seed = seed;
  settings.fake.faults.stalled_transfer_s = 0.25;
  return settings;
}

enum class MemoryCheck { after_the_job, none };

// Runs the job, checks every promise, prints its outcome line and returns it. Device memory and the
// NVIDIA mappings are back where they were once the job's contexts are gone (unless `memory` is none).
FakeJobOutcome run_checked(const char* kind, const Settings& settings, MemoryCheck memory = MemoryCheck::after_the_job) {
  const bool measured = memory == MemoryCheck::after_the_job;
  const size_t device_before = measured ? test::free_device_bytes() : 0, mapped_before = nvidia_mapped_bytes();
  FakeJobOutcome outcome = testing::run_recorded_job(gpu_key(), job_partitions, settings);
  const JobReport& report = outcome.report;
  const size_t device_after = measured ? test::free_device_bytes() : 0, mapped_after = nvidia_mapped_bytes();
  std::printf("faulty-cuda %s: %u partitions, %u proved, %zu reported failed, %u attempts retried, %zu workers lost, "
              "staging %s, injected %llu (%s), device memory free %+.1f MiB, NVIDIA mappings %+.1f MiB, %.2f s\n",
              kind, report.partitions, report.proved, report.failed.size(), report.failed_attempts,
              report.workers_lost.size(), report.staging_memory.c_str(),
              static_cast<unsigned long long>(report.faults_injected.total()),
              zkpipe::faults::format_fault_counts(report.faults_injected).c_str(),
              (double(device_after) - double(device_before)) / (1 << 20),
              (double(mapped_after) - double(mapped_before)) / (1 << 20), report.wall_s);
  EXPECT_EQ(testing::format_lines(testing::job_violations(outcome)), "");
  if (measured) {
    EXPECT_GE(device_after + (size_t{4} << 20), device_before) << "device memory not given back";
    EXPECT_LE(mapped_after, mapped_before + (size_t{4} << 20)) << "page-locked or mapped memory not given back";
  }
  EXPECT_GT(report.faults_injected.total(), 0u);
  return outcome;
}

class GpuFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_CUDA_DEVICE();
    static bool warm = false;  // the first job loads the kernels; memory is measured from the second on
    if (!std::exchange(warm, true)) testing::run_recorded_job(gpu_key(), 2, faulty_settings(1));
  }
};

TEST_F(GpuFaults, KernelErrorsAreRetried) {
  Settings settings = faulty_settings(41);
  settings.fake.faults.gpu_error_probability = 0.3;
  const JobReport report = run_checked("kernel errors", settings).report;
  EXPECT_GT(report.faults_injected.gpu_errors, 0u);
  EXPECT_GT(report.failed_attempts, 0u);
}

TEST_F(GpuFaults, FailedDeviceAllocationsAreRetried) {
  Settings settings = faulty_settings(42);
  settings.fake.faults.device_allocation_failure_probability = 0.3;
  const JobReport report = run_checked("device allocation failures", settings).report;
  EXPECT_GT(report.faults_injected.device_allocation_failures, 0u);
}

TEST_F(GpuFaults, StalledCopiesAreCaughtByTheWatchdogAndRetried) {
  Settings settings = faulty_settings(43);
  settings.fake.faults.stalled_transfer_probability = 0.2;
  const JobReport report = run_checked("stalled copies", settings).report;
  EXPECT_GT(report.faults_injected.stalled_transfers, 0u);
  for (const trace::Span& span : report.trace)  // a stalled copy failed: no h2d span outlasts its watchdog
    if (span.phase == trace::Phase::h2d) {
      EXPECT_LT(span.end_s - span.start_s, 0.25);
    }
}

TEST_F(GpuFaults, RefusedPinningFallsBackToPageableStaging) {
  Settings settings = faulty_settings(44);
  settings.fake.faults.pinned_allocation_failure_probability = 1;
  const JobReport report = run_checked("refused pinning", settings).report;
  EXPECT_EQ(report.staging_memory, "pageable");
  EXPECT_EQ(report.proved, job_partitions);
}

// With the key's points streamed from pinned host memory, each chunk's copy is an h2d span inside
// its attempt's compute section (no items: no a/b/c), and the trace keeps every promise.
TEST_F(GpuFaults, StreamedKeyChunksAreTracedInsideTheComputeSection) {
  Settings settings = faulty_settings(48);
  settings.srs_residency = SrsResidency::pinned_host;
  settings.fake.faults.gpu_error_probability = 0.2;
  const JobReport report = run_checked("kernel errors, the key streamed", settings).report;
  uint64_t chunks = 0;
  for (const trace::Span& chunk : report.trace) {
    if (chunk.phase != trace::Phase::h2d || chunk.items != 0) continue;
    const bool inside = std::ranges::any_of(report.trace, [&](const trace::Span& kernel) {
      return trace::is_gpu_kernel(kernel) && kernel.partition == chunk.partition && kernel.attempt == chunk.attempt &&
             kernel.start_s <= chunk.start_s && chunk.end_s <= kernel.end_s + 1e-3;
    });
    chunks += inside;
  }
  EXPECT_GT(chunks, 4u * job_partitions) << "every MSM streams its bases";
}

TEST_F(GpuFaults, DeviceResetsLoseTheirWorkersAndNoPartition) {
  Settings settings = faulty_settings(46, 4);
  settings.fake.faults.device_reset_probability = 0.2;
  const JobReport report = run_checked("device resets", settings).report;
  EXPECT_GT(report.workers_lost.size(), 0u);
}

TEST_F(GpuFaults, EveryKindAtOnce) {
  Settings settings = faulty_settings(47, 4);
  zkpipe::faults::FaultOptions& f = settings.fake.faults;
  f.gpu_error_probability = f.device_allocation_failure_probability = f.stalled_transfer_probability = 0.1;
  f.device_reset_probability = 0.03;  // sticky errors end every worker of the process: their own suite
  f.pinned_allocation_failure_probability = 0.5;
  run_checked("every kind but sticky errors", settings);
}

// Two backends of one GPU, prepared, and a partition's rows; `lost` serves an attempt (its faults
// fire), `other` none.
struct TwoBackends {
  zkpipe::faults::FaultInjector faults;
  std::unique_ptr<FaultInjectingBackend> lost, other;
  std::vector<Fr> a, b, c, z;

  explicit TwoBackends(const zkpipe::faults::FaultOptions& options) : faults(options) {
    const groth16::ProvingKey& pk = gpu_key().pk;
    lost = make_faulty_cuda_backend(faults, 0, 0), other = make_faulty_cuda_backend(faults, 1, 0);
    lost->prepare(pk, {}), other->prepare(pk, {});
    a.resize(pk.domain_size()), b.resize(a.size()), c.resize(a.size());
    z = groth16::synthesize(*gpu_key().circuit, 7, pk, a, b, c);
    lost->begin_attempt(0, 0);
  }
  // The attempt's copy and quotient on `lost`: it must say its device is lost, then and after.
  void expect_lost() {
    auto attempt = [&] {
      lost->stage_quotient_inputs(a, b, c);
      lost->staged_quotient_evaluations(ntt::Domain(int(gpu_key().pk.lg_domain)));
    };
    EXPECT_THROW(attempt(), DeviceLost);
    EXPECT_THROW(attempt(), DeviceLost);
  }
  groth16::Verdict prove_on_other() {
    const groth16::ProvingKey& pk = gpu_key().pk;
    Rng rng(9);
    const groth16::Proof proof = groth16::prove(*other, pk, a, b, c, z, groth16::Blinding::seeded_for_tests(rng));
    return groth16::verify(pk.verifying_key(), proof, std::vector<Fr>(z.begin() + 1, z.begin() + 1 + pk.num_public));
  }
};

TEST_F(GpuFaults, AResetBreaksOnlyItsWorkersContext) {
  const size_t device_before = test::free_device_bytes();
  {
    zkpipe::faults::FaultOptions options;
    options.device_reset_probability = 1;
    TwoBackends backends(options);
    backends.expect_lost();
    const groth16::Verdict verdict = backends.prove_on_other();
    EXPECT_TRUE(verdict) << verdict.reason;
  }
  EXPECT_GE(test::free_device_bytes() + (size_t{4} << 20), device_before) << "device memory not given back";
}

// After a sticky error nothing in the process is trusted (on the H100 and H200 no new context can
// be made): these run last, and each needs a process of its own, as ctest gives every test. Run in
// one process, the second skips.
class GpuStickyFaults : public GpuFaults {
 protected:
  void SetUp() override {
    if (sticky_error_raised_)
      GTEST_SKIP() << "an earlier test's sticky error left this process no CUDA context; run each "
                      "GpuStickyFaults test alone (--gtest_filter, or ctest)";
    GpuFaults::SetUp();
  }
  void TearDown() override { sticky_error_raised_ = sticky_error_raised_ || !IsSkipped(); }

 private:
  static inline bool sticky_error_raised_ = false;
};

// The other backend proves a verified proof or says its device is lost (on the H200 it is: the
// sticky error reached every context of the process); never a crash, never another error.
TEST_F(GpuStickyFaults, AStickyErrorLosesItsWorkerAndAtWorstEveryOther) {
  zkpipe::faults::FaultOptions options;
  options.worker_death_probability = 1;
  TwoBackends backends(options);
  backends.expect_lost();
  try {
    const groth16::Verdict verdict = backends.prove_on_other();
    EXPECT_TRUE(verdict) << verdict.reason;
    std::printf("faulty-cuda sticky error: the other worker's context proves on\n");
  } catch (const DeviceLost& lost) {
    std::printf("faulty-cuda sticky error: the other worker's context is lost too: %s\n", lost.what());
  }
}

TEST_F(GpuStickyFaults, StickyErrorsLoseTheirWorkersAndNoPartition) {
  Settings settings = faulty_settings(45, 4);
  settings.fake.faults.worker_death_probability = 0.2;
  const JobReport report = run_checked("sticky errors (illegal address)", settings, MemoryCheck::none).report;
  EXPECT_GT(report.workers_lost.size(), 0u);
}

}  // namespace
}  // namespace zk::pipeline
