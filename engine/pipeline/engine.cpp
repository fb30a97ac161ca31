#include "engine/pipeline/engine.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "engine/groth16/backend_registry.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/pipeline/host_memory.hpp"
#include "engine/pipeline/memory_budget.hpp"
#include "engine/pipeline/pinned_pool.hpp"
#include "engine/util/error.hpp"
#include "engine/util/machine.hpp"
#include "engine/util/rng.hpp"
#include "kernels/util/parallel.hpp"
#include "trace/perfetto.hpp"
#include "trace/sidecar.hpp"
#include "trace/trace_csv.hpp"

namespace zk::pipeline {
namespace {

namespace policy = zkpipe::policy;
using Clock = std::chrono::steady_clock;
using trace::Phase;

// Prints to `log` and flushes it (progress must show while a job runs); nullptr: silent.
template <class... Args>
void say(std::FILE* log, fmt::format_string<Args...> format, Args&&... args) {
  if (!log) return;
  fmt::print(log, format, std::forward<Args>(args)...);
  std::fflush(log);
}

JobShape job_shape(const Job& job) {
  return {job.partitions, job.abc_bytes(), job.witness_bytes(), job.pk->bytes()};
}

// `faults` is the job's fault source where the backend is fake (nullptr otherwise).
std::unique_ptr<groth16::ProverBackend> make_worker_backend(const Settings& s, uint32_t worker,
                                                            zkpipe::faults::FaultInjector* faults) {
  if (s.backend == "fake") return std::make_unique<FakeBackend>(s.fake, *faults, worker);
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

struct Worker {
  policy::WorkerId id = 0;
  uint32_t gpu = 0, index = 0;
  std::unique_ptr<groth16::ProverBackend> backend;
  FakeBackend* fake = nullptr;  // `backend`, where it is the fake device: told each attempt
};

class Pipeline {
 public:
  Pipeline(const Job& job, Settings settings, const ProofSink& sink, const RunOptions& options,
           MemoryBudget& budget, PinnedPool* pool, std::vector<Worker>& workers, uint64_t partition_budget_bytes,
           Clock::time_point origin)
      : job_(job),
        settings_(std::move(settings)),
        sink_(sink),
        options_(options),
        budget_(budget),
        pool_(pool),
        workers_(workers),
        origin_(origin),
        policy_(policy_settings(partition_budget_bytes)),
        gpu_compute_(settings_.gpus),
        failed_attempts_(job.partitions, 0),
        last_error_(job.partitions),
        delivered_(job.partitions, false) {
    if (pool_ && pool_->memory() == PinnedPool::Memory::none) policy_.pinned_allocation_failed();
  }

  void run() {
    start_ = Clock::now();
    {
      std::vector<std::jthread> threads;
      for (uint32_t t = 0; t < settings_.synthesis_threads; ++t) threads.emplace_back([this, t] { guarded([&] { synthesis_thread(t); }); });
      for (Worker& worker : workers_) threads.emplace_back([this, &worker] { guarded([&] { gpu_worker(worker); }); });
    }
    if (fatal_) std::rethrow_exception(fatal_);
  }

  void fill(JobReport& report) {
    report.proved = policy_.counters().proved;
    report.failed_attempts = policy_.counters().failed_attempts;
    report.failed_attempts_by_partition = failed_attempts_;
    for (uint32_t p = 0; p < job_.partitions; ++p)
      if (policy_.outcome(p) == policy::PartitionOutcome::failed)
        report.failed.push_back({p, failed_attempts_[p],
                                 last_error_[p].empty() ? "no GPU worker was left to prove it" : last_error_[p]});
    report.workers_lost = workers_lost_;
    report.partition_reserved_max_bytes = policy_.counters().reserved_bytes_max;
    report.trace = std::move(spans_);
    if (!policy_.finished()) throw std::logic_error("engine: threads stopped before every partition ended");
  }

 private:
  policy::PolicySettings policy_settings(uint64_t partition_budget_bytes) const {
    policy::PolicySettings p;
    p.partitions = job_.partitions;
    p.partition_host_bytes = job_.abc_bytes() + job_.witness_bytes();
    p.host_budget_bytes = partition_budget_bytes;
    p.partitions_in_flight_max = settings_.partitions_in_flight;
    p.staging = *settings_.staging;
    p.pool_slabs = settings_.pool_slabs;
    p.pool_layout = settings_.pool_layout;
    p.gpus = settings_.gpus;
    p.workers_per_gpu = settings_.workers_per_gpu;
    p.retry_limit = settings_.retry_limit;
    return p;
  }

  double now_s() const { return std::chrono::duration<double>(Clock::now() - origin_).count(); }

  // An exception escaping a thread (a sink that cannot write, a broken invariant) ends the job:
  // every thread is woken to stop, and run() rethrows the first one.
  template <class Body>
  void guarded(Body&& body) {
    try {
      body();
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!fatal_) fatal_ = std::current_exception();
      changed_.notify_all();
    }
  }
  bool stopping() const { return fatal_ || policy_.finished(); }

  void record(uint32_t partition, Phase phase, std::string resource, double start_s, double end_s,
              uint64_t bytes, uint64_t items) {
    spans_.push_back({options_.run_name, trace::Source::measured, partition, phase, std::move(resource), start_s,
                      end_s, bytes, items});
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

  void synthesis_thread(uint32_t thread) {
    const std::string resource = fmt::format("cpu:{}", thread);
    // Row evaluation runs in parallel; the synthesis threads split the cores between them.
    const ThreadShare cores(worker_threads() / settings_.synthesis_threads);
    while (true) {
      policy::SynthesisGrant grant;
      {
        std::unique_lock lock(mutex_);
        const double asked_s = now_s();
        std::optional<policy::WaitReason> blocked_on;
        while (true) {
          if (fatal_) return;
          const policy::SynthesisDecision decision = policy_.request_synthesis();
          if (const auto* granted = std::get_if<policy::SynthesisGrant>(&decision)) {
            grant = *granted;
            break;
          }
          const auto reason = std::get<policy::WaitReason>(decision);
          if (reason == policy::WaitReason::job_finished) return;
          if (reason == policy::WaitReason::budget || reason == policy::WaitReason::pool) blocked_on = reason;
          changed_.wait(lock);
        }
        if (blocked_on)
          record(grant.partition, *blocked_on == policy::WaitReason::pool ? Phase::wait_pool : Phase::wait_budget,
                 resource, asked_s, now_s(), 0, 0);
      }
      std::optional<PartitionMemory> memory;
      std::string error;
      const double start_s = now_s();
      try {
        memory.emplace(partition_memory(grant));
        memory->z = job_.synthesize(grant.partition, memory->a, memory->b, memory->c);
      } catch (const std::exception& e) {
        error = e.what();
        memory.reset();  // returned before the policy hears of it, so the budget never lags the policy
      }
      std::lock_guard lock(mutex_);
      // A replayed partition (the GPU stage alone) is a copy, not a synthesis: no items, so
      // calibration does not fit synthesis cost to it.
      const uint64_t items = settings_.stage_alone == StageAlone::gpu ? 0 : job_.pk->num_constraints;
      record(grant.partition, Phase::synth, resource, start_s, now_s(), job_.abc_bytes(), items);
      if (!error.empty()) {
        attempt_failed(grant.partition, "synthesis: " + error);
      } else {
        policy_.synthesis_finished(grant.partition);
        if (policy_.waiting_for_gpu(grant.partition)) {
          ready_.emplace(grant.partition, std::move(*memory));
        } else {
          memory.reset();  // taken back (no live worker may run it): returned before another grant
        }
      }
      changed_.notify_all();
    }
  }

  void attempt_failed(uint32_t partition, std::string error) {
    ++failed_attempts_[partition];
    last_error_[partition] = std::move(error);
    policy_.attempt_failed(partition);
    note_progress();
  }

  void gpu_worker(Worker& worker) {
    if (settings_.backend == "cuda") use_cuda_device(int(worker.gpu));
    const std::string compute_resource = fmt::format("gpu{}:w{}", worker.gpu, worker.index);
    const std::string copy_resource = fmt::format("pcie{}:h2d", worker.gpu);
    const std::string host_resource = fmt::format("cpu:gpu{}w{}", worker.gpu, worker.index);
    Rng blinding(std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32));
    while (true) {
      policy::GpuAssignment assignment;
      PartitionMemory memory;
      {
        std::unique_lock lock(mutex_);
        while (true) {
          if (stopping() || !policy_.worker_alive(worker.id)) return;
          if (auto next = policy_.request_gpu_work(worker.id)) {
            assignment = *next;
            break;
          }
          changed_.wait(lock);
        }
        auto node = ready_.extract(assignment.partition);
        if (node.empty()) throw std::logic_error(fmt::format("engine: partition {} assigned but not synthesized", assignment.partition));
        memory = std::move(node.mapped());
        if (memory.slab && pool_->pools() > 1 && memory.slab->pool() != worker.gpu)
          throw std::logic_error(fmt::format("engine: partition {} staged in gpu{}'s pinned pool was handed to gpu{}",
                                             assignment.partition, memory.slab->pool(), worker.gpu));
      }
      const uint32_t partition = assignment.partition;
      if (settings_.stage_alone == StageAlone::synthesis) {
        discard(partition, std::move(memory));
        continue;
      }
      try {
        if (worker.fake) worker.fake->begin_attempt(partition, assignment.attempt);
        const double copy_start_s = now_s();
        worker.backend->stage_quotient_inputs(memory.a, memory.b, memory.c);
        std::vector<Fr> z = std::move(memory.z);  // now held by the worker (its own reservation)
        memory = {};  // the slab or pageable block and its reservations go back before the policy hears
        {
          std::lock_guard lock(mutex_);
          record(partition, Phase::h2d, copy_resource, copy_start_s, now_s(), job_.abc_bytes(), job_.pk->num_constraints);
          policy_.copy_finished(partition);
          changed_.notify_all();
        }
        prove_verify_deliver(worker, partition, z, blinding, compute_resource, host_resource);
      } catch (const std::exception& e) {
        memory = {};
        const bool lost = dynamic_cast<const DeviceLost*>(&e) || (settings_.backend == "cuda" && cuda_device_lost());
        std::lock_guard lock(mutex_);
        if (!lost) {
          attempt_failed(partition, e.what());
          changed_.notify_all();
          continue;
        }
        workers_lost_.push_back(fmt::format("worker {} (gpu{}:w{}): {}", worker.id, worker.gpu, worker.index, e.what()));
        last_error_[partition] = e.what();
        policy_.worker_died(worker.id);
        std::erase_if(ready_, [&](const auto& entry) { return !policy_.waiting_for_gpu(entry.first); });
        say(options_.log, "engine: warning: {}; its partition goes to the other workers\n", workers_lost_.back());
        note_progress();
        changed_.notify_all();
        return;
      }
    }
  }

  // The synthesis stage alone: a synthesized partition is dropped where a worker would copy it.
  void discard(uint32_t partition, PartitionMemory memory) {
    memory = {};
    std::lock_guard lock(mutex_);
    policy_.copy_finished(partition);
    policy_.attempt_succeeded(partition);
    note_progress();
    changed_.notify_all();
  }

  void prove_verify_deliver(Worker& worker, uint32_t partition, std::span<const Fr> z, Rng& blinding,
                            const std::string& compute_resource, const std::string& host_resource) {
    PhaseLog phases(origin_);
    const groth16::ProofSplits splits = groth16::split_for_proof(z, *job_.pk);  // CPU work, before the GPU is taken
    const double witness_copy_start_s = now_s();
    const groth16::StagedWitness staged = worker.backend->stage_witness(
        splits, *settings_.staging == Staging::pinned ? groth16::WitnessHostMemory::pinned : groth16::WitnessHostMemory::pageable);
    if (staged.h2d_bytes()) {
      std::lock_guard lock(mutex_);
      record(partition, Phase::h2d, fmt::format("pcie{}:h2d", worker.gpu), witness_copy_start_s, now_s(),
             staged.h2d_bytes(), splits.all.significant.size() + splits.priv.significant.size());
    }
    groth16::Proof proof;
    {
      std::lock_guard compute(gpu_compute_[worker.gpu]);
      const ntt::Domain domain(int(job_.pk->lg_domain));
      {
        auto scope = timed(&phases, "ntt", domain.n);
        worker.backend->staged_quotient_evaluations(domain);
      }
      proof = groth16::prove_staged(*worker.backend, *job_.pk, z, splits, blinding.field<Fr>(), blinding.field<Fr>(),
                                    &phases);
    }
    std::vector<Fr> publics(z.begin() + 1, z.begin() + 1 + job_.pk->num_public);
    const groth16::Verdict verdict = [&] {
      auto scope = timed(&phases, "verify", 1);
      return groth16::verify(job_.pk->verifying_key(), proof, publics);
    }();
    {
      std::lock_guard lock(mutex_);
      for (const PhaseSpan& span : phases.spans()) {
        const Phase phase = trace::parse_phase(span.phase).value();
        const bool on_host = phase == Phase::assemble || phase == Phase::verify;
        record(partition, phase, on_host ? host_resource : compute_resource, span.start_s, span.end_s, 0, span.items);
      }
    }
    if (!verdict) throw Error(fmt::format("the proof did not verify ({}); not written", verdict.reason));
    {
      std::lock_guard deliver(sink_mutex_);
      if (delivered_[partition])
        throw std::logic_error(fmt::format("engine: partition {} proved twice", partition));
      try {
        sink_({partition, proof, std::move(publics)});
      } catch (...) {  // a proof that cannot be written ends the job: run() rethrows it
        std::lock_guard lock(mutex_);
        if (!fatal_) fatal_ = std::current_exception();
        changed_.notify_all();
        return;
      }
      delivered_[partition] = true;
    }
    std::lock_guard lock(mutex_);
    policy_.attempt_succeeded(partition);
    note_progress();
    changed_.notify_all();
  }

  // Called under mutex_ after each partition ends or fails an attempt; prints at most once a second.
  void note_progress() {
    const auto& counters = policy_.counters();
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

  const Job& job_;
  const Settings settings_;
  const ProofSink& sink_;
  const RunOptions& options_;
  MemoryBudget& budget_;
  PinnedPool* pool_;
  std::vector<Worker>& workers_;
  const Clock::time_point origin_;
  Clock::time_point start_;
  double last_progress_s_ = 0;

  std::mutex mutex_;  // guards everything below but the GPU and sink locks
  std::condition_variable changed_;
  policy::SchedulingPolicy policy_;
  std::map<uint32_t, PartitionMemory> ready_;  // synthesized, waiting for a worker
  std::vector<std::mutex> gpu_compute_;
  std::vector<uint32_t> failed_attempts_;
  std::vector<std::string> last_error_;
  std::vector<std::string> workers_lost_;
  trace::Trace spans_;
  std::exception_ptr fatal_;
  std::mutex sink_mutex_;
  std::vector<bool> delivered_;
};

// The staging copy's rate with nothing else running: one partition's a/b/c from pinned memory
// where it can be pinned (a slab of the pool, else a block pinned for the measurement), else from
// pageable memory; the best of two copies (the first also touches the destination).
// The fake device copies without its delays and, outside any attempt, without faults.
std::pair<double, std::string> measure_idle_h2d(const Job& job, const Settings& s, PinnedPool* pool,
                                                MemoryBudget& budget, zkpipe::faults::FaultInjector* faults) {
  auto backend = s.backend == "fake" ? std::make_unique<FakeBackend>(FakeDeviceOptions{}, *faults, 0)
                                     : make_worker_backend(s, 0, faults);
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

}  // namespace

JobReport run_job(const Job& job, const Settings& requested, const ProofSink& sink, const RunOptions& options) {
  const auto origin = Clock::now();
  JobReport report;
  report.partitions = job.partitions;
  report.machine = machine_facts();
  const JobShape shape = job_shape(job);
  Settings settings = resolve_settings(requested, shape, report.machine);
  say(options.log, "engine: {} partition(s) of {} ({} constraints, domain 2^{}; a/b/c {} + witness {} per partition)\n",
        job.partitions, job.name, job.pk->num_constraints, job.pk->lg_domain, format_bytes(double(job.abc_bytes())),
        format_bytes(double(job.witness_bytes())));
  say(options.log, "engine: {}\n", describe(settings));

  // The fake device's one fault source, shared by its workers and the pool's pinning.
  std::optional<zkpipe::faults::FaultInjector> faults;
  if (settings.backend == "fake") faults.emplace(settings.fake.faults);

  MemoryBudget budget(settings.budget_bytes);
  auto key_reservation = budget.reserve(job.pk->bytes(), "the proving key");
  std::vector<Worker> workers;
  std::vector<MemoryBudget::Reservation> worker_reservations;
  for (uint32_t gpu = 0; gpu < settings.gpus; ++gpu)
    for (uint32_t index = 0; index < settings.workers_per_gpu; ++index) {
      const policy::WorkerId id = gpu * settings.workers_per_gpu + index;
      worker_reservations.push_back(budget.reserve(worker_host_bytes(shape, settings.backend), fmt::format("worker {}'s buffers", id)));
      if (settings.backend == "cuda") use_cuda_device(int(gpu));
      Worker worker{id, gpu, index, make_worker_backend(settings, id, faults ? &*faults : nullptr)};
      worker.fake = dynamic_cast<FakeBackend*>(worker.backend.get());
      if (settings.srs_residency == SrsResidency::device) worker.backend->prepare(*job.pk);
      workers.push_back(std::move(worker));
    }
  report.partition_budget_bytes = budget.available_bytes();

  // SRS in page-locked host memory, for kernels that read it per call (pinned-host residency).
  std::vector<std::unique_ptr<HostRegistration>> key_registrations;
  if (settings.srs_residency == SrsResidency::pinned_host) {
    auto keep = [&](const auto& points) {
      key_registrations.push_back(std::make_unique<HostRegistration>(points.data(), points.size() * sizeof(points[0])));
    };
    keep(job.pk->a), keep(job.pk->b1), keep(job.pk->l), keep(job.pk->h), keep(job.pk->b2);
    if (!key_registrations.front()->registered())
      say(options.log, "engine: note: SRS residency pinned-host, but no CUDA device to page-lock for: the key stays in pageable memory\n");
  }

  std::optional<PinnedPool> pool;
  report.staging_memory = "pageable";
  if (*settings.staging == Staging::pinned) {
    const uint32_t pools = pinned_pools(settings);
    pool.emplace(pools * settings.pool_slabs, job.abc_bytes(), budget, faults && faults->pinned_allocation_fails(), pools);
    report.pool_allocation_s = pool->allocation_seconds();
    switch (pool->memory()) {
      case PinnedPool::Memory::pinned:
        report.staging_memory = "pinned";
        say(options.log, "engine: pinned pool{} of {} slabs ({}) allocated in {:.2f} s\n",
            pools > 1 ? "s, one per GPU," : "", pool->slabs(),
            format_bytes(double(pool->slabs() * job.abc_bytes())), pool->allocation_seconds());
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
  }
  auto [idle_gbps, idle_from] = measure_idle_h2d(job, settings, pool ? &*pool : nullptr, budget, faults ? &*faults : nullptr);
  report.idle_h2d_gbps = idle_gbps;
  report.idle_h2d_from = idle_from;
  say(options.log, "engine: idle staging copy {:.2f} GB/s from {} memory (backend {})\n", idle_gbps, idle_from, settings.backend);

  const Job replayed = settings.stage_alone == StageAlone::gpu ? replay_first_partition(job) : Job{};
  Pipeline pipeline(settings.stage_alone == StageAlone::gpu ? replayed : job, settings, sink, options, budget, pool ? &*pool : nullptr, workers,
                    report.partition_budget_bytes, origin);
  const auto start = Clock::now();
  pipeline.run();
  report.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  pipeline.fill(report);
  report.settings = settings;
  report.pool_slabs_leased_max = pool ? pool->leased_max() : 0;
  for (uint32_t p = 0; pool && p < pool->pools(); ++p) report.pool_slabs_leased_max_by_pool.push_back(pool->leased_max(p));
  report.budget_reserved_max_bytes = budget.reserved_bytes_max();
  report.summary = trace::summarize(report.trace);
  if (faults) report.faults_injected = faults->injected();
  return report;
}

void write_trace_files(const std::filesystem::path& dir, const Job& job, const JobReport& report) {
  std::filesystem::create_directories(dir);
  const auto csv = dir / "trace.csv";
  trace::write_csv_file(csv, report.trace);
  trace::Sidecar sidecar;
  sidecar.source = trace::Source::measured;
  sidecar.scenario = {{"job", job.name},
                      {"partitions", job.partitions},
                      {"constraints_per_partition", job.pk->num_constraints},
                      {"lg_domain", job.pk->lg_domain},
                      {"public_inputs", job.pk->num_public},
                      {"variables", job.pk->num_vars},
                      {"partition_abc_bytes", job.abc_bytes()},
                      {"partition_witness_bytes", job.witness_bytes()},
                      {"proving_key_bytes", job.pk->bytes()}};
  sidecar.settings = to_json(report.settings);
  sidecar.settings["staging_requested"] = sidecar.settings["staging"];
  sidecar.settings["staging"] = report.staging_memory;  // what calibration fits: the copies' path
  sidecar.machine = {{"cores", report.machine.cores},
                     {"available_memory_bytes", report.machine.available_memory_bytes},
                     {"cuda_devices", report.machine.cuda_devices},
                     // the staging path's idle rate: the link rate calibration subtracts
                     {"pcie_h2d_gbps", report.idle_h2d_gbps},
                     {"idle_h2d_from", report.idle_h2d_from}};
  sidecar.settings["outcome"] = {{"proved", report.proved},
                                 {"failed", report.failed.size()},
                                 {"failed_attempts", report.failed_attempts},
                                 {"workers_lost", report.workers_lost.size()},
                                 {"wall_s", report.wall_s},
                                 {"pool_allocation_s", report.pool_allocation_s}};
  sidecar.versions = {{"zkpipe", "engine"}};
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
                      format_bytes(double(report.budget_reserved_max_bytes)),
                      format_bytes(double(report.settings.budget_bytes)), report.pool_slabs_leased_max);
  if (report.settings.backend == "fake")
    text += fmt::format("engine: fake device faults injected {} ({}; fault seed {})\n", report.faults_injected.total(),
                        zkpipe::faults::format_fault_counts(report.faults_injected), report.settings.fake.faults.seed);
  // The workers' compute spans are GPU work only on the CUDA backend (the backend is named above).
  text += trace::format_summary(report.summary,
                                report.settings.backend == "cuda" ? "GPU utilization" : "device utilization");
  return text;
}

trace::RunExpectations trace_expectations(const JobReport& report) {
  trace::RunExpectations expected;
  expected.partitions = report.partitions;
  expected.proved = report.proved;
  expected.failed = uint32_t(report.failed.size());
  expected.host_budget_bytes = report.partition_budget_bytes;
  expected.partitions_in_flight_max = report.settings.partitions_in_flight;
  if (report.settings.staging == Staging::pinned) {
    expected.pool_slabs = report.settings.pool_slabs;
    expected.pools = pinned_pools(report.settings);
  }
  expected.proofs_may_be_rejected = true;
  return expected;
}

}  // namespace zk::pipeline
