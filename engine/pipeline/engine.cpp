#include "engine/pipeline/engine.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/groth16/backend_registry.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/pipeline/faulty_cuda_backend.hpp"
#include "engine/pipeline/host_memory.hpp"
#include "engine/pipeline/memory_budget.hpp"
#include "engine/pipeline/pinned_pool.hpp"
#include "engine/util/error.hpp"
#include "engine/util/machine.hpp"
#include "engine/util/secure_random.hpp"
#include "kernels/util/parallel.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/thread_runtime.hpp"
#include "trace/perfetto.hpp"
#include "trace/sidecar.hpp"
#include "trace/trace_csv.hpp"

namespace zk::pipeline {
namespace {

namespace policy = zkpipe::policy;
namespace runtime = zkpipe::runtime;
using Clock = std::chrono::steady_clock;
using trace::Phase;

// Prints to `log` and flushes it (progress must show while a job runs); nullptr: silent.
template <class... Args>
void say(std::FILE* log, fmt::format_string<Args...> format, Args&&... args) {
  if (!log) return;
  fmt::print(log, format, std::forward<Args>(args)...);
  std::fflush(log);
}

JobSizes job_sizes(const Job& job) {
  return {job.partitions, job.abc_bytes(), job.witness_bytes(), job.pk->bytes(), job.pk->splits_b_query() ? 3u : 2u};
}

// `faults` is the job's fault source where the backend injects faults (nullptr otherwise).
std::unique_ptr<groth16::ProverBackend> make_worker_backend(const Settings& s, uint32_t worker, uint32_t gpu,
                                                            zkpipe::faults::FaultInjector* faults) {
  if (s.backend == "fake") return std::make_unique<FakeBackend>(s.fake, *faults, worker);
  if (s.backend == "faulty-cuda") return make_faulty_cuda_backend(*faults, worker, int(gpu));
  return groth16::make_backend(s.backend);
}

// One admitted partition's host memory until its a/b/c are on the device: the backing (a leased
// slab or a pageable block, each with its budget reservation) and the witness z.
struct PartitionMemory {
  std::optional<PinnedPool::Lease> slab;
  std::optional<HostBlock> pageable;
  MemoryBudget::Reservation abc_reservation, witness_reservation;
  std::span<Fr> a, b, c;
  std::vector<Fr> z;
};

// A GPU worker's device, by policy::WorkerId (the pipeline knows its GPU and index).
struct Worker {
  std::unique_ptr<groth16::ProverBackend> backend;
  FaultInjectingBackend* injecting = nullptr;  // `backend`, where it injects faults: told each attempt
};

using runtime::Step;
using runtime::StepSpans;
using runtime::Where;

// The engine's work for the pipeline (runtime/pipeline.hpp): real memory, synthesis, copies,
// kernels, verification and the proof sink, timed on the steady clock from `origin`.
class EngineWork {
 public:
  using Staged = PartitionMemory;
  struct Attempt {
    std::vector<Fr> z;  // held by the worker once its a/b/c are copied (the worker's reservation)
    groth16::ProofSplits splits;
    std::optional<groth16::StagedWitness> staged_witness;  // the splits on the device (released before them)
    groth16::Proof proof;
    std::vector<Fr> publics;
  };

  EngineWork(const Job& job, const Settings& settings, const ProofSink& sink, const RunOptions& options,
             MemoryBudget& budget, PinnedPool* pool, std::vector<Worker>& workers, Clock::time_point origin)
      : job_(job), settings_(settings), sink_(sink), options_(options), budget_(budget), pool_(pool),
        workers_(workers), origin_(origin), start_(Clock::now()) {}

  Step synthesize(uint32_t, const policy::SynthesisGrant& grant, Staged& staged, StepSpans& spans) {
    // Witness generation and row evaluation run on the work pool, whose cores the syntheses
    // running now share (kernels/util/parallel.hpp).
    const double start_s = now_s();
    Step step = Step::ok();
    try {
      staged = partition_memory(grant);
      staged.z = job_.witness(grant.partition);
      job_.rows(grant.partition, staged.z, staged.a, staged.b, staged.c);
    } catch (const std::exception& e) {
      step = Step::failed(e.what());
    }
    // A replayed partition (the GPU stage alone) is a copy, not a synthesis: no items, so
    // calibration fits no synthesis cost to it.
    const uint64_t items = settings_.stage_alone == StageAlone::gpu ? 0 : job_.pk->num_constraints;
    spans.push_back({Phase::synth, Where::synthesis, start_s, now_s(), job_.abc_bytes(), items});
    return step;
  }

  void check_handoff(const runtime::Context& context, const Staged& staged) const {
    if (staged.slab && pool_->pools() > 1 && staged.slab->pool() != context.gpu)
      throw std::logic_error(fmt::format("engine: partition {} staged in gpu{}'s pinned pool was handed to gpu{}",
                                         context.partition, staged.slab->pool(), context.gpu));
  }

  Step copy_in(const runtime::Context& context, Staged&& staged, Attempt& attempt, StepSpans& spans) {
    Worker& worker = workers_[context.worker];
    const double start_s = now_s();
    return on_device(context, [&] {
      if (worker.injecting) worker.injecting->begin_attempt(context.partition, context.attempt);
      worker.backend->stage_quotient_inputs(staged.a, staged.b, staged.c);
      attempt.z = std::move(staged.z);
      staged = {};  // the slab or pageable block and its reservations go back before the policy hears
      spans.push_back({Phase::h2d, Where::link, start_s, now_s(), job_.abc_bytes(), job_.pk->num_constraints});
    }, [&] { staged = {}; });
  }

  // The witness split on the host (into the worker's block the backend keeps, page-locked where
  // staging is pinned), then its one upload, both before the compute section. The upload's h2d
  // span has no items: it moved no a/b/c.
  Step split(const runtime::Context& context, Attempt& attempt, StepSpans& spans) {
    Worker& worker = workers_[context.worker];
    const bool pinned = *settings_.staging == Staging::pinned;
    return on_device(context, [&] {
      double start_s = now_s();
      attempt.splits = groth16::split_for_proof(attempt.z, *job_.pk, worker.backend->witness_split_memory());
      spans.push_back({Phase::witness_split, Where::host, start_s, now_s(), 0, attempt.z.size()});
      start_s = now_s();
      attempt.staged_witness.emplace(worker.backend->stage_witness(
          attempt.splits, pinned ? groth16::WitnessHostMemory::pinned : groth16::WitnessHostMemory::pageable));
      if (const uint64_t bytes = attempt.staged_witness->h2d_bytes())
        spans.push_back({Phase::h2d, Where::link, start_s, now_s(), bytes, 0});
    });
  }

  Step compute(const runtime::Context& context, Attempt& attempt, StepSpans& spans) {
    Worker& worker = workers_[context.worker];
    PhaseLog phases(origin_);
    const Step step = on_device(context, [&] {
      const ntt::Domain domain(int(job_.pk->lg_domain));
      {
        auto scope = timed(&phases, "ntt", domain.n);
        worker.backend->staged_quotient_evaluations(domain);
      }
      attempt.proof = groth16::prove_staged(*worker.backend, *job_.pk, attempt.z, attempt.splits,
                                            groth16::Blinding::fresh(secure_random_), &phases);
    });
    for (const PhaseSpan& span : phases.spans()) {
      const Phase phase = trace::parse_phase(span.phase).value();
      spans.push_back({phase, phase == Phase::assemble ? Where::host : Where::gpu, span.start_s, span.end_s, 0, span.items});
    }
    // The key's points the kernels streamed, each chunk's copy a span of its own (no items: no a/b/c).
    for (const groth16::BackendCopy& copy : worker.backend->take_copies())
      spans.push_back({Phase::h2d, Where::link, seconds_since_origin(copy.start), seconds_since_origin(copy.end), copy.bytes, 0});
    return step;
  }

  Step conclude(const runtime::Context&, Attempt& attempt, StepSpans& spans) {
    attempt.publics.assign(attempt.z.begin() + 1, attempt.z.begin() + 1 + job_.pk->num_public);
    const double start_s = now_s();
    const groth16::Verdict verdict = groth16::verify(job_.pk->verifying_key(), attempt.proof, attempt.publics);
    spans.push_back({Phase::verify, Where::host, start_s, now_s(), 0, 1});
    if (!verdict) return Step::failed(fmt::format("the proof did not verify ({}); not written", verdict.reason));
    return Step::ok();
  }

  void deliver(const runtime::Context& context, Attempt& attempt) {
    std::lock_guard deliver(sink_mutex_);
    sink_({context.partition, attempt.proof, std::move(attempt.publics)});
  }

  // Prints at most once a second, and when the job ends.
  void progress(const policy::PolicyCounters& counters) {
    const uint32_t done = counters.proved + counters.failed;
    const double elapsed_s = std::chrono::duration<double>(Clock::now() - start_).count();
    if (done < job_.partitions && elapsed_s - last_progress_s_ < 1.0) return;
    last_progress_s_ = elapsed_s;
    const double rate = counters.proved / std::max(elapsed_s, 1e-9);
    const std::string eta = done < job_.partitions && rate > 0
                                ? fmt::format(", ETA {:.1f} s", (job_.partitions - done) / rate)
                                : std::string();
    say(options_.log, "prove: {}/{} partitions proved{}{}, {:.3g} partitions/s{} ({:.1f} s)\n", counters.proved,
        job_.partitions, counters.failed ? fmt::format(", {} failed", counters.failed) : std::string(),
        counters.failed_attempts ? fmt::format(", {} attempts retried", counters.failed_attempts) : std::string(),
        rate, eta, elapsed_s);
  }

  void worker_lost(const std::string& what) const {
    say(options_.log, "engine: warning: {}; its partition goes to the other workers\n", what);
  }

 private:
  double seconds_since_origin(Clock::time_point at) const { return std::chrono::duration<double>(at - origin_).count(); }
  double now_s() const { return seconds_since_origin(Clock::now()); }

  // Runs device work on the worker's device; a device error fails the attempt, a lost device (a
  // fault-injecting backend's DeviceLost, a sticky CUDA error) loses the worker. `cleanup` runs
  // first on either. Its host work runs on threads of its own: the GPU waits on it, so it never
  // waits for the syntheses' chunks on the work pool.
  template <class Body, class Cleanup = void (*)()>
  Step on_device(const runtime::Context& context, Body&& body, Cleanup&& cleanup = [] {}) {
    const DedicatedThreads dedicated;
    try {
      if (uses_cuda(settings_.backend)) use_cuda_device(int(context.gpu));
      body();
      return Step::ok();
    } catch (const std::exception& e) {
      cleanup();
      const bool lost = dynamic_cast<const DeviceLost*>(&e) || (settings_.backend == "cuda" && cuda_device_lost());
      return lost ? Step::lost(e.what()) : Step::failed(e.what());
    }
  }

  PartitionMemory partition_memory(const policy::SynthesisGrant& grant) {
    PartitionMemory memory;
    const size_t n = job_.pk->domain_size();
    std::span<Fr> abc;
    if (grant.backing.staging == policy::Staging::pinned) {
      memory.slab.emplace(pool_->lease(*grant.backing.slab));
      abc = memory.slab->elements();
    } else {
      memory.abc_reservation = budget_.reserve(job_.abc_bytes(), fmt::format("partition {}'s a/b/c", grant.partition));
      memory.pageable.emplace(HostBlock::pageable(job_.abc_bytes()));
      abc = memory.pageable->elements();
    }
    memory.witness_reservation = budget_.reserve(job_.witness_bytes(), fmt::format("partition {}'s witness", grant.partition));
    memory.a = abc.subspan(0, n);
    memory.b = abc.subspan(n, n);
    memory.c = abc.subspan(2 * n, n);
    return memory;
  }

  const Job& job_;
  const Settings& settings_;
  const ProofSink& sink_;
  const RunOptions& options_;
  MemoryBudget& budget_;
  PinnedPool* pool_;
  std::vector<Worker>& workers_;
  const Clock::time_point origin_;
  const Clock::time_point start_;
  double last_progress_s_ = 0;  // read and written under the pipeline's mutex
  std::mutex sink_mutex_;
  SecureRandom secure_random_;  // each proof's blinding (stateless: every worker draws from it)
};

using EnginePipeline = runtime::Pipeline<runtime::ThreadRuntime, EngineWork>;

runtime::PipelineSettings pipeline_settings(const policy::PolicySettings& policy, const Settings& settings,
                                            const RunOptions& options) {
  return {.policy = policy,
          .synthesis_threads = settings.synthesis_threads,
          .synthesis_alone = settings.stage_alone == StageAlone::synthesis,
          .run_name = options.run_name,
          .source = trace::Source::measured};
}

// What the run did: its outcomes, its trace and summary, the high-water marks of its pool and budget.
void fill(JobReport& report, EnginePipeline& pipeline, const PinnedPool* pool, const MemoryBudget& budget) {
  const auto& counters = pipeline.policy().counters();
  report.proved = counters.proved;
  report.failed_attempts = counters.failed_attempts;
  report.failed_attempts_by_partition = pipeline.failed_attempts();
  for (uint32_t p = 0; p < report.partitions; ++p)
    if (pipeline.policy().outcome(p) == policy::PartitionOutcome::failed)
      report.failed.push_back({p, pipeline.failed_attempts()[p],
                               pipeline.last_errors()[p].empty() ? "no GPU worker was left to prove it"
                                                                 : pipeline.last_errors()[p]});
  report.workers_lost = pipeline.workers_lost();
  report.partition_reserved_max_bytes = counters.reserved_bytes_max;
  report.trace = std::move(pipeline.spans());
  report.summary = trace::summarize(report.trace);
  report.pool_slabs_leased_max = pool ? pool->leased_max() : 0;
  for (uint32_t p = 0; pool && p < pool->pools(); ++p) report.pool_slabs_leased_max_by_pool.push_back(pool->leased_max(p));
  report.budget_reserved_max_bytes = budget.reserved_bytes_max();
}

// The staging copy's rate with nothing else running: one partition's a/b/c from pinned memory
// where it can be pinned (a slab of the pool, else a block pinned for the measurement), else from
// pageable memory; the best of two copies (the first also touches the destination).
// The fake device copies without its delays and, outside any attempt, without faults.
std::pair<double, std::string> measure_idle_h2d(const Job& job, const Settings& s, PinnedPool* pool,
                                                MemoryBudget& budget, zkpipe::faults::FaultInjector* faults) {
  auto backend = s.backend == "fake" ? std::make_unique<FakeBackend>(FakeDeviceOptions{}, *faults, 0)
                                     : make_worker_backend(s, 0, 0, faults);
  std::optional<PinnedPool::Lease> slab;
  std::optional<HostBlock> block;
  MemoryBudget::Reservation reservation;
  std::span<Fr> abc;
  if (pool && pool->memory() != PinnedPool::Memory::none) {
    slab.emplace(pool->lease(0));
    abc = slab->elements();
  } else {
    reservation = budget.reserve(job.abc_bytes(), "the H2D measurement's a/b/c");
    std::string why;
    block = HostBlock::try_pinned(job.abc_bytes(), why);
    if (!block) block = HostBlock::pageable(job.abc_bytes());
    abc = block->elements();
  }
  std::ranges::fill(abc, Fr::zero());
  const size_t n = job.pk->domain_size();
  double best_s = 1e300;
  for (int copy = 0; copy < 2; ++copy) {
    auto start = Clock::now();
    backend->stage_quotient_inputs(abc.subspan(0, n), abc.subspan(n, n), abc.subspan(2 * n, n));
    best_s = std::min(best_s, std::chrono::duration<double>(Clock::now() - start).count());
  }
  const bool pinned = slab ? pool->memory() == PinnedPool::Memory::pinned : block->kind() == HostBlock::Kind::pinned;
  return {double(job.abc_bytes()) / 1e9 / best_s, pinned ? "pinned" : "pageable"};
}

// Which fixed-base tables the plan builds on each GPU, with the estimates it weighed, and why it
// builds none where the backend could.
void say_fixed_bases(const policy::DeviceFootprint& footprint, const policy::DevicePlan& plan, const Settings& settings,
                     const JobSizes& sizes, const RunOptions& options) {
  if (footprint.fixed_bases.empty() || settings.fixed_bases == policy::FixedBaseTables::off) return;
  std::vector<std::string> built, left;
  for (const policy::FixedBaseOption& option : footprint.fixed_bases) {
    const auto& [array, table_sets] = option.table;
    const auto& tables = plan.fixed_bases;
    const bool taken = std::ranges::find(tables, option.table) != tables.end();
    const bool array_taken = std::ranges::find(tables, array, &policy::FixedBaseTable::array) != tables.end();
    if (!taken && (array_taken || table_sets != 1)) continue;  // an array left out is named with its table of one set
    const std::string sets = table_sets == 1 ? "" : fmt::format("{} bucket sets, ", table_sets);
    (taken ? built : left)
        .push_back(fmt::format("{} ({}{}, ~{:.1f} s to build, ~{:.0f} ms saved a partition)",
                               policy::key_array_name(array), sets, format_bytes(option.table_bytes),
                               option.build_s, 1e3 * option.saving_s));
  }
  if (!built.empty()) say(options.log, "engine: fixed-base tables on each GPU: {}\n", fmt::join(built, ", "));
  if (!left.empty())
    say(options.log, "engine: no fixed-base table for {}: {} ({} partition(s) per GPU; --fixed-bases on builds all that fit)\n",
        fmt::join(left, ", "),
        settings.fixed_bases == policy::FixedBaseTables::on ? "beyond the device budget"
                                                            : "beyond the device budget or not paid back within the job",
        policy::partitions_per_gpu(sizes.partitions, settings.gpus));
}

// What a backend holds on a device for the job, and the witness its estimates were made for.
struct EstimatedFootprint {
  policy::DeviceFootprint footprint;
  std::vector<Fr> first_witness;  // partition 0's where the estimates made it (the GPU stage alone replays it); else empty
};

// What `backend` holds on a device for the job, its fixed-base tables' savings estimated for the
// scalars of partition 0's witness where a table could be built (offered, the key on the device,
// and under `auto` paying back within the job for every variable's scalars, the most a witness
// gives); else for every variable's (a sparse witness gains less from a table).
EstimatedFootprint job_footprint(const Job& job, const Settings& settings, const groth16::ProverBackend& backend,
                                 const RunOptions& options) {
  const groth16::ProvingKey& pk = *job.pk;
  EstimatedFootprint estimate{backend.device_footprint(pk, groth16::most_msm_scalars(pk)), {}};
  const policy::DeviceFootprint& footprint = estimate.footprint;
  const uint32_t partitions = policy::partitions_per_gpu(job.partitions, settings.gpus);
  const auto buildable = [&](const policy::FixedBaseOption& option) {
    return policy::may_build(option, settings.fixed_bases, partitions);
  };
  if (settings.srs_residency != SrsResidency::device || std::ranges::none_of(footprint.fixed_bases, buildable))
    return estimate;
  const auto start = Clock::now();
  try {
    estimate.first_witness = job.witness(0);
  } catch (const std::exception& e) {  // the partition fails in its own synthesis, saying why
    say(options.log, "engine: partition 0's witness for the fixed-base tables' estimates: {}; estimated for every variable\n",
        e.what());
    return estimate;
  }
  const groth16::MsmScalarCounts scalars = groth16::msm_scalar_counts(estimate.first_witness, pk);
  say(options.log,
      "engine: partition 0's witness ({:.2f} s) has A multiply {} scalars, B1 and B2 {}, L {} of {} variables: the "
      "fixed-base tables' savings are estimated for those\n",
      std::chrono::duration<double>(Clock::now() - start).count(), scalars.a, scalars.b, scalars.l, pk.num_vars);
  estimate.footprint = backend.device_footprint(pk, scalars);
  return estimate;
}

// Fits the job into each GPU's memory as `backend` (worker 0's) would hold it (fit_device_memory),
// says what the plan changed and keeps in the report what the backend holds and the bytes the plan
// holds per GPU. Returns partition 0's witness where the estimates made it (else empty).
std::vector<Fr> fit_devices(Settings& settings, const Settings& requested, const JobSizes& sizes, JobReport& report,
                            const groth16::ProverBackend& backend, const Job& job, const RunOptions& options) {
  EstimatedFootprint estimate = job_footprint(job, settings, backend, options);
  const policy::DeviceFootprint& footprint = report.device_footprint = estimate.footprint;
  if (!footprint.holds_device_memory()) return std::move(estimate.first_witness);
  const uint64_t device_free = settings.backend == "fake" ? settings.fake.device_memory_bytes : cuda_free_device_bytes(settings.gpus);
  const policy::DevicePlan plan = fit_device_memory(settings, requested, sizes, report.machine, footprint, device_free);
  say(options.log, "engine: device memory per GPU: {} of a budget of {} (key {} {}, shared {}, {} worker(s) x {})\n",
      format_bytes(plan.bytes), settings.device_budget_bytes ? format_bytes(settings.device_budget_bytes) : "(none)",
      format_bytes(footprint.key_bytes), plan.key_on_device ? "on the device" : "streamed from pinned host memory",
      format_bytes(footprint.shared_bytes), plan.workers_per_gpu,
      format_bytes(policy::per_worker_bytes(footprint, plan.key_on_device)));
  if (!plan.change.empty()) say(options.log, "engine: warning: {}\nengine: {}\n", plan.change, describe(settings));
  say_fixed_bases(footprint, plan, settings, sizes, options);
  report.device_bytes_planned = plan.bytes;
  report.fixed_bases = plan.fixed_bases;
  return std::move(estimate.first_witness);
}

// Every GPU's workers, each with its backend (worker 0's is `first`) prepared for the key where
// it lives on the device, and its witness staging reserved; what each holds said on `log`.
std::vector<Worker> make_workers(const Settings& settings, const groth16::ProvingKey& pk,
                                 std::span<const policy::FixedBaseTable> fixed_bases,
                                 std::unique_ptr<groth16::ProverBackend> first, zkpipe::faults::FaultInjector* faults,
                                 std::FILE* log) {
  std::vector<Worker> workers;
  const groth16::WitnessHostMemory witness_from =
      *settings.staging == Staging::pinned ? groth16::WitnessHostMemory::pinned : groth16::WitnessHostMemory::pageable;
  for (uint32_t gpu = 0; gpu < settings.gpus; ++gpu)
    for (uint32_t index = 0; index < settings.workers_per_gpu; ++index) {
      const policy::WorkerId id = gpu * settings.workers_per_gpu + index;
      if (uses_cuda(settings.backend)) use_cuda_device(int(gpu));
      Worker worker{id == 0 ? std::move(first) : make_worker_backend(settings, id, gpu, faults)};
      worker.injecting = dynamic_cast<FaultInjectingBackend*>(worker.backend.get());
      if (settings.srs_residency == SrsResidency::device) say(log, "{}", worker.backend->prepare(pk, fixed_bases));
      say(log, "{}", worker.backend->reserve_witness_staging(pk, witness_from));
      workers.push_back(std::move(worker));
    }
  return workers;
}

// The key's points page-locked, for kernels that read them per call (pinned-host residency);
// none otherwise.
std::vector<std::unique_ptr<HostRegistration>> page_lock_key(const groth16::ProvingKey& pk, const Settings& settings,
                                                             const RunOptions& options) {
  std::vector<std::unique_ptr<HostRegistration>> registrations;
  if (settings.srs_residency != SrsResidency::pinned_host) return registrations;
  auto keep = [&](const auto& points) {
    registrations.push_back(std::make_unique<HostRegistration>(points.data(), points.size() * sizeof(points[0])));
  };
  keep(pk.a), keep(pk.b1), keep(pk.l), keep(pk.h), keep(pk.b2);
  if (!registrations.front()->registered())
    say(options.log, "engine: note: SRS residency pinned-host, but no CUDA device to page-lock for: the key stays in pageable memory\n");
  return registrations;
}

// The pinned pools of pinned staging; where pinning is refused outright, staging falls back to
// pageable memory (settings.staging).
std::unique_ptr<PinnedPool> allocate_pool(Settings& settings, const Job& job, uint32_t pools, MemoryBudget& budget,
                                          zkpipe::faults::FaultInjector* faults, JobReport& report,
                                          const RunOptions& options) {
  auto pool = std::make_unique<PinnedPool>(pools * settings.pool_slabs, job.abc_bytes(), budget,
                                           faults && faults->pinned_allocation_fails(), pools);
  report.pool_allocation_s = pool->allocation_seconds();
  switch (pool->memory()) {
    case PinnedPool::Memory::pinned:
      report.staging_memory = "pinned";
      say(options.log, "engine: pinned pool{} of {} slabs ({}) allocated in {:.2f} s\n", pools > 1 ? "s, one per GPU," : "",
          pool->slabs(), format_bytes(pool->slabs() * job.abc_bytes()), pool->allocation_seconds());
      break;
    case PinnedPool::Memory::pageable:
      say(options.log, "engine: note: {}: the pool's {} slabs are pageable memory (pageable fallback)\n",
          pool->fallback_reason(), pool->slabs());
      break;
    case PinnedPool::Memory::none:
      say(options.log, "engine: warning: pinned staging requested but {}: staging falls back to pageable memory\n",
          pool->fallback_reason());
      settings.staging = Staging::pageable;
      break;
  }
  return pool;
}

}  // namespace

JobReport run_job(const Job& job, const Settings& requested, const ProofSink& sink, const RunOptions& options) {
  const auto origin = Clock::now();
  JobReport report;
  report.partitions = job.partitions;
  report.machine = machine_facts();
  const JobSizes sizes = job_sizes(job);
  Settings settings = resolve_settings(requested, sizes, report.machine);
  say(options.log, "engine: {} partition(s) of {} ({} constraints, domain 2^{}; a/b/c {} + witness {} per partition)\n",
      job.partitions, job.name, job.pk->num_constraints, job.pk->lg_domain, format_bytes(job.abc_bytes()),
      format_bytes(job.witness_bytes()));
  if (job.pk->splits_b_query())
    say(options.log, "engine: B1 and B2 leave out the {} variables absent from B ({:.1f} % of {})\n",
        job.pk->b_absent.size(), 100.0 * double(job.pk->b_absent.size()) / job.pk->num_vars, job.pk->num_vars);
  say(options.log, "engine: {}\n", describe(settings));

  // The one fault source of a fault-injecting backend, shared by its workers and the pool's pinning.
  const auto faults = injects_faults(settings.backend) ? std::make_unique<zkpipe::faults::FaultInjector>(settings.fake.faults)
                                                       : nullptr;

  if (uses_cuda(settings.backend)) use_cuda_device(0);
  std::unique_ptr<groth16::ProverBackend> first_backend = make_worker_backend(settings, 0, 0, faults.get());
  // Partition 0's witness, where the tables' estimates made one, is what the GPU stage alone
  // replays; a job's partition 0 makes its witness again in its own synthesis (where it proved this
  // one instead, a 16-core host's whole job ran 19 % slower: kernels/bench/h100-20261206j).
  const bool replay = settings.stage_alone == StageAlone::gpu;
  const Job replayed = [&] {
    std::vector<Fr> estimates_witness = fit_devices(settings, requested, sizes, report, *first_backend, job, options);
    return replay ? replay_first_partition(job, std::move(estimates_witness)) : Job{};
  }();

  // The key and every worker's buffers, held all job long; the policy admits partitions against the
  // rest of the budget. Both sizes are the policy's fixed_host_bytes.
  MemoryBudget budget(settings.host_budget_bytes);
  const policy::JobShape shape = job_shape(sizes, settings.backend);
  const auto fixed_reservation =
      budget.reserve(policy::fixed_host_bytes(settings, shape, settings.gpus), "the proving key and the workers' buffers");
  const policy::PolicySettings& admission = report.admission = policy::policy_settings(settings, shape, settings.gpus);
  report.staging_memory = "pageable";
  std::vector<Worker> workers = make_workers(settings, *job.pk, report.fixed_bases, std::move(first_backend), faults.get(), options.log);
  const std::vector<std::unique_ptr<HostRegistration>> key_registrations = page_lock_key(*job.pk, settings, options);
  const std::unique_ptr<PinnedPool> pool =
      *settings.staging == Staging::pinned
          ? allocate_pool(settings, job, admission.pools(), budget, faults.get(), report, options)
          : nullptr;
  std::tie(report.idle_h2d_gbps, report.idle_h2d_from) = measure_idle_h2d(job, settings, pool.get(), budget, faults.get());
  say(options.log, "engine: idle staging copy {:.2f} GB/s from {} memory (backend {})\n", report.idle_h2d_gbps,
      report.idle_h2d_from, settings.backend);

  const Job& proved = replay ? replayed : job;
  EngineWork work(proved, settings, sink, options, budget, pool.get(), workers, origin);
  runtime::ThreadRuntime threads(origin);
  EnginePipeline pipeline(threads, work, pipeline_settings(admission, settings, options));
  if (pool && pool->memory() == PinnedPool::Memory::none) pipeline.pinned_allocation_failed();
  const auto start = Clock::now();
  pipeline.run();
  report.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  fill(report, pipeline, pool.get(), budget);
  report.settings = settings;
  if (faults) report.faults_injected = faults->injected();
  return report;
}

void write_trace_files(const std::filesystem::path& dir, const Job& job, const JobReport& report) {
  std::filesystem::create_directories(dir);
  const auto csv = dir / "trace.csv";
  trace::write_csv_file(csv, report.trace);
  trace::Sidecar sidecar;
  sidecar.source = trace::Source::measured;
  sidecar.scenario = {.job = job.name,
                      .partitions = job.partitions,
                      .constraints_per_partition = job.pk->num_constraints,
                      .lg_domain = job.pk->lg_domain,
                      .public_inputs = job.pk->num_public,
                      .variables = job.pk->num_vars,
                      .partition_abc_bytes = job.abc_bytes(),
                      .partition_witness_bytes = job.witness_bytes(),
                      .proving_key_bytes = job.pk->bytes(),
                      .worker_host_bytes = worker_host_bytes(job_sizes(job), report.settings.backend,
                                                             report.settings.staging.value_or(Staging::pageable))};
  sidecar.settings = run_settings(report.settings);
  sidecar.settings.copies_staging = zkpipe::policy::parse_staging(report.staging_memory);  // what calibration fits
  sidecar.settings.device_footprint = report.device_footprint;
  sidecar.settings.device_bytes_planned = report.device_bytes_planned;
  sidecar.settings.fixed_base_tables = report.fixed_bases;
  sidecar.settings.outcome = {report.proved, report.failed.size(), report.failed_attempts, report.workers_lost.size(),
                              report.wall_s, report.pool_allocation_s};
  sidecar.machine = report.machine;
  sidecar.machine.idle_h2d_gbps = report.idle_h2d_gbps;
  sidecar.machine.idle_h2d_from = report.idle_h2d_from;
  // The link rate, which calibration subtracts from every copy: the idle copy from pinned memory,
  // or a backend's own copy where no link stages it (cpu, fake). A CUDA run that could pin nothing
  // measured the pageable path only, and names no link.
  if (report.idle_h2d_from == "pinned" || !uses_cuda(report.settings.backend))
    sidecar.machine.pcie_h2d_gbps = report.idle_h2d_gbps;
  sidecar.versions = {{"zkpipe", "engine"}};
  sidecar.summary = trace::summary_json(report.summary);
  trace::write_sidecar(trace::sidecar_path_for(csv), sidecar);
  trace::write_chrome_trace(dir / "trace.perfetto.json", report.trace);
}

std::string format_report(const JobReport& report) {
  const std::string done = report.settings.stage_alone == StageAlone::synthesis ? "synthesized (synthesis stage alone)"
                           : report.settings.stage_alone == StageAlone::gpu      ? "proved (GPU stage alone)"
                                                                                 : "proved";
  std::string text = fmt::format(
      "engine: {} of {} partitions {} in {:.2f} s ({:.3g} partitions/s wall); {} attempts retried\n",
      report.proved, report.partitions, done, report.wall_s, report.proved / std::max(report.wall_s, 1e-9),
      report.failed_attempts);
  text += fmt::format("engine: staging from {} memory; idle staging copy {:.2f} GB/s ({}); budget high-water {} of {}; slabs leased at most {}\n",
                      report.staging_memory, report.idle_h2d_gbps, report.idle_h2d_from,
                      format_bytes(report.budget_reserved_max_bytes), format_bytes(report.settings.host_budget_bytes),
                      report.pool_slabs_leased_max);
  if (injects_faults(report.settings.backend))
    text += fmt::format("engine: {} faults injected {} ({}; fault seed {})\n",
                        report.settings.backend == "fake" ? "fake device" : report.settings.backend,
                        report.faults_injected.total(), zkpipe::faults::format_fault_counts(report.faults_injected),
                        report.settings.fake.faults.seed);
  // The workers' compute spans are GPU work only on the CUDA backends (the backend is named above).
  const trace::ComputeDevice device = uses_cuda(report.settings.backend) ? trace::ComputeDevice::gpu
                                      : report.settings.backend == "cpu"   ? trace::ComputeDevice::cpu
                                                                           : trace::ComputeDevice::fake;
  text += trace::format_summary(report.summary, device);
  return text;
}

trace::RunExpectations trace_expectations(const JobReport& report) {
  trace::RunExpectations expected = runtime::run_expectations(report.admission, report.proved, uint32_t(report.failed.size()),
                                                              report.settings.staging == Staging::pinned);
  expected.proofs_may_be_rejected = true;
  return expected;
}

}  // namespace zk::pipeline
