// zkpipe — the command line: set up, prove and verify Groth16 proofs of the built-in circuits
// (and, where the model is built, simulate, sweep, calibrate, compare and report).
// Every user error becomes one "zkpipe: error: ..." line and exit status 1, here and only here.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <span>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/circom/circom_job.hpp"
#include "engine/circuits/circuit.hpp"
#include "engine/groth16/backend_registry.hpp"
#include "engine/groth16/keys.hpp"
#include "engine/groth16/setup.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/pipeline/engine.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "engine/util/enum_names.hpp"
#include "engine/util/error.hpp"
#include "engine/util/machine.hpp"
#include "kernels/util/parallel.hpp"
#include "tools/resume.hpp"
#include "tools/run_list.hpp"
#include "tools/whole_number_options.hpp"
#ifdef ZKPIPE_HAVE_MODEL_COMMANDS
#include "tools/model_commands.hpp"
using zkpipe::tools::add_model_commands;
#endif
#ifdef ZKPIPE_HAVE_SOAK_COMMAND
#include "tools/soak_command.hpp"
using zkpipe::tools::add_soak_command;
#endif

namespace fs = std::filesystem;
using namespace zk;
using groth16::Fr;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Rough bytes a key of this many constraints needs (points dominate: ~3 G1 + 1 G2 per variable,
// one G1 per domain row), with the R1CS held during setup; for refusing sizes that cannot fit.
uint64_t estimated_setup_bytes(uint64_t constraints) {
  uint64_t n = uint64_t{1} << r1cs::domain_lg_size(constraints, 0);
  return constraints * (3 * sizeof(groth16::G1Affine) + sizeof(groth16::G2Affine) + 400) +
         n * (sizeof(groth16::G1Affine) + 4 * sizeof(Fr));
}

void check_fits(uint64_t needed, const char* what) {
  uint64_t available = available_memory_bytes();
  if (available && needed > available)
    fail("{} needs about {} of memory but {} is available: choose fewer constraints or a larger "
         "machine", what, format_bytes(needed), format_bytes(available));
}

struct SetupOptions {
  std::string circuit = "poseidon-merkle";
  uint64_t constraints = 1 << 14;
  uint64_t seed = 1;
  fs::path out_dir = "zkpipe-keys";
  std::string backend = "cpu";  // where the fixed-base products run
};

void run_setup(const SetupOptions& o) {
  auto circuit = circuits::make_circuit({o.circuit, o.constraints});
  check_fits(estimated_setup_bytes(o.constraints), "setup");
  auto fixed_base = groth16::make_fixed_base_multiplier(o.backend);
  fs::create_directories(o.out_dir);
  fmt::print("setup: circuit {} (target {} constraints), {} threads, fixed-base products on {}\n", o.circuit,
             o.constraints, worker_threads(), fixed_base->name());
  fmt::print("setup: WARNING toxic waste derived from seed {}: for testing and benchmarks only, "
             "anyone with the seed can forge proofs\n", o.seed);
  auto t0 = Clock::now();
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, /*witness_seed=*/0);
  r1cs::R1cs r1cs = builder.take();
  fmt::print("setup: {} constraints, {} public inputs, {} variables, domain 2^{} ({:.2f} s)\n",
             r1cs.num_constraints(), r1cs.num_public, r1cs.num_vars,
             r1cs::domain_lg_size(r1cs.num_constraints(), r1cs.num_public), seconds_since(t0));
  auto last = Clock::now();
  auto pk = groth16::setup(r1cs, groth16::ToxicWaste::from_seed(o.seed), circuit->spec(),
                           [&](std::string_view step) {
                             fmt::print("setup:   {} (+{:.2f} s)\n", step, seconds_since(last));
                             std::fflush(stdout);
                             last = Clock::now();
                           },
                           fixed_base.get());
  fs::path key = o.out_dir / "proving.key", vk = o.out_dir / "verification_key.json";
  groth16::write_proving_key(pk, key);
  groth16::write_verifying_key_json(pk.verifying_key(), vk);
  fmt::print("setup: wrote {} ({}) and {} in {:.2f} s\n", key.string(), format_bytes(pk.bytes()),
             vk.string(), seconds_since(t0));
}

struct ProveOptions {
  fs::path key = "zkpipe-keys/proving.key";
  uint64_t witness_seed = 7;
  fs::path proof = "proof.json", public_inputs = "public.json";
  // A circom circuit instead of a built-in one: snarkjs's .zkey, circom's .wtns (one partition
  // each), optionally the .r1cs; with several witnesses (or --out-dir) each proof is written as
  // <out_dir>/<witness stem>.proof.json and .public.json.
  fs::path zkey;
  std::vector<fs::path> wtns;
  std::optional<fs::path> r1cs, out_dir;
  uint32_t partitions = 1;
  bool resume = false;  // prove only the partitions without a verified proof (tools/resume.hpp)
  std::optional<fs::path> trace_dir;
  std::optional<fs::path> runs;  // --runs: the job proved once per listed run (tools/run_list.hpp)
  pipeline::Settings engine;  // backend, threads, staging, pool, budget, workers, faults
};

// Where partition i's proof and public inputs go: the --proof and --public paths themselves for a
// one-partition job, else with "-i" before the extension (proof-3.json, public-3.json).
fs::path partition_path(const fs::path& path, uint32_t partition, uint32_t partitions) {
  if (partitions == 1) return path;
  return path.parent_path() / fmt::format("{}-{}{}", path.stem().string(), partition, path.extension().string());
}

// Where each of the job's partitions writes its proof and public inputs: named after its witness
// file (`named_outputs`), else the --proof and --public paths by partition_path().
std::vector<circom::ProofOutputs> output_files(const ProveOptions& o, bool named_outputs, uint32_t partitions) {
  if (named_outputs) return circom::witness_outputs(o.wtns, o.out_dir.value_or("."));
  std::vector<circom::ProofOutputs> outputs;
  for (uint32_t partition = 0; partition < partitions; ++partition)
    outputs.push_back({partition_path(o.proof, partition, partitions), partition_path(o.public_inputs, partition, partitions)});
  return outputs;
}

// Refuses option combinations that cannot work, before anything is loaded.
void check_prove_options(const ProveOptions& o, bool named_outputs, bool partitions_given, bool output_paths_given) {
  if (o.wtns.size() > 1 && partitions_given && o.partitions != 1)
    fail("--partitions {} with {} witness files: each witness is one partition; give one --wtns to prove it "
         "--partitions times", o.partitions, o.wtns.size());
  if (named_outputs && output_paths_given)
    fail("--proof and --public name one proof; with several --wtns (or --out-dir) each proof is written as "
         "<out-dir>/<witness name>.proof.json and .public.json: give --out-dir instead");
  if (named_outputs && o.wtns.size() == 1 && o.partitions > 1)
    fail("--partitions {} with --out-dir: each proof is named after its witness file, so the {} proofs of {} would "
         "overwrite each other; leave out --out-dir (proofs go to --proof and --public, numbered)", o.partitions,
         o.partitions, o.wtns.front().string());
  if (o.resume && o.engine.stage_alone != pipeline::StageAlone::none)
    fail("--resume with --stage-alone: a stage measured alone writes no proofs, so there is nothing to resume; "
         "leave out one of them");
}

// Loads the key (the built-in circuit's, or the .zkey with every witness's header and the .r1cs's
// checked) into `pk` and returns the job of all partitions; `circuit` keeps a built-in circuit the
// job uses.
pipeline::Job load_job(const ProveOptions& o, groth16::ProvingKey& pk, std::unique_ptr<circuits::Circuit>& circuit) {
  auto t0 = Clock::now();
  pipeline::Job job;
  if (o.zkey.empty()) {
    pk = groth16::read_proving_key(o.key);
    circuit = circuits::make_circuit(pk.circuit);
    job = pipeline::builtin_job(*circuit, pk, o.partitions, o.witness_seed);
    fmt::print("prove: key {} ({}, circuit {} {}, domain 2^{}) loaded in {:.2f} s; {} CPU threads\n", o.key.string(),
               format_bytes(pk.bytes()), pk.circuit.name, pk.circuit.target_constraints, pk.lg_domain,
               seconds_since(t0), worker_threads());
  } else {
    auto zkey = circom::ZkeyFile::open(o.zkey);
    circom::check_witnesses_fit_key(zkey, o.wtns);  // every header, before any proof
    if (o.r1cs) circom::check_r1cs_fits_key(zkey, *o.r1cs);
    pk = zkey.proving_key();
    std::vector<fs::path> witnesses = o.wtns;
    if (witnesses.size() == 1) witnesses.assign(o.partitions, o.wtns.front());
    job = pipeline::circom_job(o.zkey, witnesses, o.r1cs, pk);
    fmt::print("prove: zkey {} ({}, circom circuit of {} constraints, {} public, domain 2^{}) loaded in {:.2f} s; "
               "{} witness file(s); {} CPU threads\n", o.zkey.string(), format_bytes(pk.bytes()), pk.num_constraints,
               pk.num_public, pk.lg_domain, seconds_since(t0), o.wtns.size(), worker_threads());
  }
  return job;
}

// What names partition i (of the whole job) in messages: its witness file for circom, else its number.
std::string partition_name(const ProveOptions& o, uint32_t partition) {
  if (o.wtns.size() > 1) return fmt::format("witness {}", o.wtns[partition].string());
  return o.wtns.empty() || o.partitions > 1 ? fmt::format("partition {}", partition)
                                            : fmt::format("witness {}", o.wtns.front().string());
}

// Where the proofs of a job of several went, then an error naming each failed partition (its
// partition i is partition original[i] of the whole job).
void say_outcome(const ProveOptions& o, const pipeline::JobReport& report, bool named_outputs,
                 const std::vector<uint32_t>& original) {
  if (o.engine.stage_alone == pipeline::StageAlone::none && report.proved && report.partitions > 1) {
    if (named_outputs)
      fmt::print("prove: {} of {} witnesses proved; proofs written as {}/<witness>.proof.json and .public.json\n",
                 report.proved, report.partitions, o.out_dir.value_or(".").string());
    else
      fmt::print("prove: {} verified proofs written as {} .. {} and {} .. {}\n", report.proved,
                 partition_path(o.proof, 0, o.partitions).string(),
                 partition_path(o.proof, o.partitions - 1, o.partitions).string(),
                 partition_path(o.public_inputs, 0, o.partitions).string(),
                 partition_path(o.public_inputs, o.partitions - 1, o.partitions).string());
  }
  if (report.failed.empty()) return;
  std::string failures;
  for (const auto& failed : report.failed)
    failures += fmt::format("\n  {}: no proof written; {} failed attempts, the last: {}",
                            partition_name(o, original.at(failed.partition)), failed.failed_attempts, failed.last_error);
  fail("{} of {} partitions failed{}:{}{}", report.failed.size(), report.partitions,
       report.proved ? fmt::format(" ({} proved and written)", report.proved) : std::string(), failures,
       o.zkey.empty() || o.r1cs ? "" : "\n  (a witness may be wrong: give --r1cs to find the failing constraint)");
}

// Writes a verified proof and its public inputs.
void write_proof_files(const pipeline::ProvedPartition& proved, const fs::path& proof, const fs::path& publics) {
  groth16::write_proof_json(proved.proof, proof);
  groth16::write_public_json(proved.public_inputs, publics);
}

// The engine's run of `job` under `settings`, each proof handed to `write` (none from a stage-alone
// run: a capacity measurement, not a job); its report printed on `log` and its trace, partitions
// numbered as the whole job's (`original`), written where asked.
pipeline::JobReport prove_job(const pipeline::Job& job, const pipeline::Settings& settings, const pipeline::ProofSink& write,
                              const std::optional<fs::path>& trace_dir, std::span<const uint32_t> original,
                              std::FILE* log) {
  const pipeline::ProofSink discard = [](const pipeline::ProvedPartition&) {};
  pipeline::JobReport report =
      pipeline::run_job(job, settings, settings.stage_alone == pipeline::StageAlone::none ? write : discard,
                        {trace_dir ? trace_dir->filename().string() : std::string("prove"), log});
  fmt::print(log, "{}", pipeline::format_report(report));
  for (zkpipe::trace::Span& span : report.trace) span.partition = original[span.partition];  // as the files say
  if (trace_dir) {
    pipeline::write_trace_files(*trace_dir, job, report);
    fmt::print(log, "prove: trace {} (sidecar trace.json; trace.perfetto.json opens in ui.perfetto.dev)\n",
               (*trace_dir / "trace.csv").string());
  }
  return report;
}

// --runs: the job proved once per listed run, in order, on the one loaded key, each with its
// synthesis threads and pool slabs; run r's log (stdout.log, written as the run goes), trace and
// verified proofs (proof-<i>.json, public-<i>.json) in <trace-dir>/<r>/, a line a run here. Runs
// whose partitions failed are named in one error after the last run.
void prove_listed_runs(const ProveOptions& o, const pipeline::Job& job, std::span<const zkpipe::tools::ListedRun> runs) {
  std::vector<uint32_t> partitions(job.partitions);
  std::iota(partitions.begin(), partitions.end(), 0u);
  std::vector<std::string> failed;
  for (size_t i = 0; i < runs.size(); ++i) {
    const zkpipe::tools::ListedRun& run = runs[i];
    const fs::path dir = *o.trace_dir / run.name;
    fs::create_directories(dir);
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> log(std::fopen((dir / "stdout.log").c_str(), "w"), &std::fclose);
    if (!log) fail("cannot write {}: check that the folder is writable", (dir / "stdout.log").string());
    pipeline::Settings settings = o.engine;
    settings.synthesis_threads = run.synthesis_threads;
    settings.pool_slabs = run.pool_slabs;
    auto write = [&](const pipeline::ProvedPartition& proved) {
      write_proof_files(proved, partition_path(dir / "proof.json", proved.partition, job.partitions),
                        partition_path(dir / "public.json", proved.partition, job.partitions));
    };
    const pipeline::JobReport report = prove_job(job, settings, write, dir, partitions, log.get());
    fmt::print("prove: run {} of {}, {}: {} of {} partitions proved in {:.2f} s ({:.3g} partitions/s){}\n", i + 1,
               runs.size(), run.name, report.proved, report.partitions, report.wall_s,
               report.proved / std::max(report.wall_s, 1e-9),
               report.failed.empty() ? "" : fmt::format(", {} failed", report.failed.size()));
    std::fflush(stdout);
    if (!report.failed.empty()) failed.push_back(run.name);
  }
  if (!failed.empty())
    fail("{} of {} runs had partitions fail: {} (each run's stdout.log names them)", failed.size(), runs.size(),
         fmt::join(failed, ", "));
}

// Proves every partition through the engine (a single partition is one proof, as before the
// engine); each proof is verified before it is written, failed partitions end in an error that
// names each one (its witness file, for circom), after the others are written. With --resume,
// only the partitions without a verified proof are proved (tools/resume.hpp); with --runs, the job
// once per listed run (prove_listed_runs).
void run_prove(const ProveOptions& o, bool partitions_given, bool output_paths_given) {
  const bool named_outputs = o.wtns.size() > 1 || o.out_dir;  // <out_dir>/<witness stem>.proof.json
  check_prove_options(o, named_outputs, partitions_given, output_paths_given);
  std::vector<zkpipe::tools::ListedRun> runs;  // read before the key is loaded: a bad list fails at once
  if (o.runs) runs = zkpipe::tools::read_run_list(*o.runs);
  groth16::ProvingKey pk;
  std::unique_ptr<circuits::Circuit> circuit;
  pipeline::Job job = load_job(o, pk, circuit);
  if (o.runs) return prove_listed_runs(o, job, runs);
  const std::vector<circom::ProofOutputs> outputs = output_files(o, named_outputs, job.partitions);
  if (named_outputs && o.engine.stage_alone == pipeline::StageAlone::none) fs::create_directories(o.out_dir.value_or("."));
  // A single proof reports its witness's scalar split, as before the engine: counted where the one
  // partition's witness is made, read by the sink after its proof (the engine orders the two).
  std::optional<groth16::WitnessCounts> counts;
  if (job.partitions == 1)
    job.witness = [witness = job.witness, &counts](uint32_t partition) {
      auto z = witness(partition);
      counts = groth16::count_witness(z);
      return z;
    };
  // The job's partition i is partition original[i] of the whole job (a resumed job proves some).
  std::vector<uint32_t> original(job.partitions);
  std::iota(original.begin(), original.end(), 0u);
  if (o.resume) {
    original = zkpipe::tools::partitions_to_prove(outputs, pk.verifying_key(), stdout);
    if (original.empty()) return;
    job = zkpipe::tools::job_of_partitions(job, original);
  }
  auto write = [&](const pipeline::ProvedPartition& proved) {
    const uint32_t partition = original.at(proved.partition);
    const fs::path& proof = outputs.at(partition).proof;
    const fs::path& publics = outputs.at(partition).public_inputs;
    write_proof_files(proved, proof, publics);
    if (counts) {
      const size_t vars = counts->zeros + counts->ones + counts->significant;
      fmt::print("prove: witness {} variables: {} zero, {} one, {} other ({:.0f}% zero or one)\n", vars,
                 counts->zeros, counts->ones, counts->significant,
                 100.0 * double(counts->zeros + counts->ones) / double(vars));
    }
    if (named_outputs || o.partitions == 1)
      fmt::print("prove: {}: proof verified; wrote {} and {}\n", partition_name(o, partition), proof.string(),
                 publics.string());
  };
  const pipeline::JobReport report = prove_job(job, o.engine, write, o.trace_dir, original, stdout);
  say_outcome(o, report, named_outputs, original);
}

struct VerifyOptions {
  fs::path vk = "zkpipe-keys/verification_key.json", proof = "proof.json", public_inputs = "public.json";
};

int run_verify(const VerifyOptions& o) {
  auto vk = groth16::read_verifying_key_json(o.vk);
  auto proof = groth16::read_proof_json(o.proof);
  auto publics = groth16::read_public_json(o.public_inputs);
  auto t0 = Clock::now();
  auto verdict = groth16::verify(vk, proof, publics);
  if (!verdict) {
    fmt::print("INVALID: {}\n", verdict.reason);
    return 1;
  }
  fmt::print("OK: proof verified ({:.1f} ms)\n", seconds_since(t0) * 1e3);
  return 0;
}

// A transform from one of an enum's names (engine/util/enum_names.hpp) to its value, as CLI11
// reads an enum (its underlying integer); the option's help shows the names ("pinned|pageable"),
// and an unknown name is refused with them.
template <typename Enum, std::size_t N>
CLI::Validator enum_names_transform(const EnumNames<Enum, N>& names) {
  return CLI::Validator(
      [names](std::string& input) {
        const std::optional<Enum> value = value_of(names, input);
        if (!value) return fmt::format("'{}' is not one of {}", input, joined_names(names, ", "));
        input = std::to_string(static_cast<std::underlying_type_t<Enum>>(*value));
        return std::string();
      },
      "");
}

// An option taking one of an enum's names; `target` is the enum or an optional of it.
template <typename Target, typename Enum, std::size_t N>
CLI::Option* add_enum_option(CLI::App* command, std::string name, Target& target, const EnumNames<Enum, N>& names,
                             std::string description) {
  return command->add_option(std::move(name), target, std::move(description))
      ->transform(enum_names_transform(names))
      ->type_name(joined_names(names, "|"));
}

void add_setup_command(CLI::App& app, SetupOptions& o) {
  auto* setup = app.add_subcommand("setup", "make a proving key and verifying key (seeded toxic waste: testing only)");
  setup->add_option("--circuit", o.circuit, "built-in circuit: poseidon-merkle or dense")->capture_default_str();
  setup->add_option("--constraints", o.constraints, "target constraint count")->capture_default_str();
  setup->add_option("--seed", o.seed, "seed of the toxic waste")->capture_default_str();
  setup->add_option("--out-dir", o.out_dir, "folder for proving.key and verification_key.json")->capture_default_str();
  setup->add_option("--backend", o.backend, "where the fixed-base products run: cpu or cuda")->capture_default_str();
  setup->callback([&o] { run_setup(o); });
}

// prove's engine settings: synthesis threads, staging and pools, budgets, workers, tables, retries.
void add_engine_options(CLI::App* prove, pipeline::Settings& engine) {
  prove->add_option("--synthesis-threads", engine.synthesis_threads, "threads synthesizing partitions (default: half the cores)");
  prove->add_option("--in-flight", engine.partitions_in_flight, "partitions admitted and not yet copied to a GPU (default: synthesis threads + workers)");
  add_enum_option(prove, "--staging", engine.staging, zkpipe::policy::staging_names,
                  "where synthesis writes a/b/c: pinned (slabs of a pinned pool) or pageable "
                  "(default: pinned where a CUDA device is present)");
  prove->add_option("--pool-slabs", engine.pool_slabs, "pinned slabs of each pool, each one partition's a/b/c, allocated once (default: partitions in flight over the pools, as the budget allows)");
  add_enum_option(prove, "--pool-layout", engine.pool_layout, zkpipe::policy::pool_layout_names,
                  "pinned pools: per-host (one, leased by every GPU's workers; the default) or per-gpu (one of "
                  "--pool-slabs per GPU; a partition is bound to the GPU whose slab it holds)");
  prove->add_option("--budget", engine.host_budget_bytes, "host memory budget, e.g. 96GiB (default: the proving key plus 80% of the memory available)")
      ->transform(CLI::AsSizeValue(false));
  prove->add_option("--device-budget", engine.device_budget_bytes, "device memory budget of each GPU, e.g. 100GiB: fewer workers, or the key's points streamed from pinned host memory, where the job does not fit (default: 90% of the GPU's free memory)")
      ->transform(CLI::AsSizeValue(false));
  prove->add_option("--workers", engine.workers_per_gpu, "GPU workers per GPU, each with its own streams and buffers")->capture_default_str();
  prove->add_option("--gpus", engine.gpus, "GPUs to use (default: every CUDA device; 1 for cpu and fake)");
  add_enum_option(prove, "--srs-residency", engine.srs_residency, pipeline::srs_residency_names,
                  "proving key points on each worker's device, or in pinned host memory")
      ->default_str(std::string(pipeline::srs_residency_name(engine.srs_residency)));
  add_enum_option(prove, "--fixed-bases", engine.fixed_bases, zkpipe::policy::fixed_base_tables_names,
                  "fixed-base tables of the key's arrays on each GPU (each array's points times 2^(c w) for every "
                  "window w, or every other w: faster MSMs for 12-13x or 6-7x the array's device memory and a build "
                  "when the key is loaded): auto (the choice that fits the device budget and saves the most, of "
                  "tables whose build pays within the job), on (of all tables) or off")
      ->default_str(std::string(zk::name_of(zkpipe::policy::fixed_base_tables_names, engine.fixed_bases)));
  prove->add_option("--retries", engine.retry_limit, "failed attempts of a partition before it is reported failed")->capture_default_str();
  add_enum_option(prove, "--stage-alone", engine.stage_alone, pipeline::stage_alone_names,
                  "measure one stage's capacity alone, writing no proofs: synthesis (partitions synthesized and "
                  "dropped) or gpu (partition 0's rows copied and proved N times); none: prove the job")
      ->default_str(std::string(pipeline::stage_alone_name(engine.stage_alone)));
}

// --backend fake and faulty-cuda draw their faults from faults::FaultInjector, the model's seeded source.
void add_fault_options(CLI::App* prove, pipeline::FakeDeviceOptions& fake) {
  prove->add_option("--fault-seed", fake.faults.seed, "--backend fake, faulty-cuda: seed of the injected faults (replays them)")->capture_default_str();
  prove->add_option("--fault-rate", fake.faults.gpu_error_probability, "--backend fake, faulty-cuda: probability that an attempt's kernel call fails")->capture_default_str();
  prove->add_option("--copy-fault-rate", fake.faults.stalled_transfer_probability, "--backend fake, faulty-cuda: probability that an attempt's staging copy fails (faulty-cuda: stalls until the --stall-s watchdog)")->capture_default_str();
  prove->add_option("--stall-s", fake.faults.stalled_transfer_s, "--backend fake, faulty-cuda: seconds a stalled copy hangs before its watchdog gives up (faulty-cuda: the watchdog of every copy)")->capture_default_str();
  prove->add_option("--wrong-result-rate", fake.faults.wrong_result_probability, "--backend fake: probability that an attempt's proof comes out wrong (caught by verification)")->capture_default_str();
  prove->add_option("--device-lost-rate", fake.faults.worker_death_probability, "--backend fake, faulty-cuda: probability that a worker's device is lost at an attempt's copy (faulty-cuda: a sticky illegal-address error)")->capture_default_str();
  prove->add_option("--alloc-fault-rate", fake.faults.device_allocation_failure_probability, "--backend faulty-cuda: probability that an attempt's device allocation fails")->capture_default_str();
  prove->add_option("--device-reset-rate", fake.faults.device_reset_probability, "--backend faulty-cuda: probability that a worker's device context is reset under an attempt")->capture_default_str();
  prove->add_option("--fake-device-memory", fake.device_memory_bytes, "--backend fake: the fake device's memory, e.g. 16GiB, which the device budget's default is taken from (default: as much as the job needs)")
      ->transform(CLI::AsSizeValue(false));
  prove->add_option("--pinning-fault-rate", fake.faults.pinned_allocation_failure_probability, "--backend fake, faulty-cuda: probability that the pinned pool's allocation is refused (staging falls back to pageable)")->capture_default_str();
}

void add_prove_command(CLI::App& app, ProveOptions& o) {
  auto* prove = app.add_subcommand("prove", "prove N partitions through the engine (synthesis threads, pinned or "
                                            "pageable staging, GPU workers), verify each proof, write snarkjs JSON");
  auto* key = prove->add_option("--key", o.key, "proving key from `zkpipe setup`")->capture_default_str();
  auto* witness_seed = prove->add_option("--witness-seed", o.witness_seed, "seed of the built-in circuit's witness (partition i: seed + i)")->capture_default_str();
  prove->add_option("--backend", o.engine.backend, "cpu, cuda, fake (CPU maths, seeded faults) or faulty-cuda (cuda with seeded faults at real CUDA calls); default: cuda where a device is present, else cpu");
  auto* proof_path = prove->add_option("--proof", o.proof, "proof output (snarkjs proof.json; proof-<i>.json for partition i of several)")->capture_default_str();
  auto* public_path = prove->add_option("--public", o.public_inputs, "public inputs output (snarkjs public.json; public-<i>.json)")->capture_default_str();
  auto* zkey = prove->add_option("--zkey", o.zkey, "prove a circom circuit: snarkjs Groth16 .zkey (bls12381)");
  auto* wtns = prove->add_option("--wtns", o.wtns, "circom witness files (.wtns) to prove with --zkey, one partition each "
                                                   "(several values or repeated)");
  auto* out_dir = prove->add_option("--out-dir", o.out_dir, "with --zkey: write <dir>/<witness name>.proof.json and "
                                                            ".public.json per witness (the default, in '.', with several --wtns)");
  auto* r1cs = prove->add_option("--r1cs", o.r1cs, "the circuit's .r1cs: check every constraint before proving");
  auto* partitions = prove->add_option("--partitions", o.partitions, "independent proofs of the job (one key, witness seeds seed..seed+N-1)")
      ->check(CLI::Range(1u, 1u << 20))->capture_default_str();
  add_engine_options(prove, o.engine);
  prove->add_flag("--resume", o.resume, "prove only the partitions whose proof and public files are missing or "
                                        "do not verify against the key (after a killed job); keep the others");
  auto* trace_dir = prove->add_option("--trace-dir", o.trace_dir, "write the job's trace here: trace.csv, trace.json (sidecar), trace.perfetto.json");
  prove->add_option("--runs", o.runs, "prove the job once per row of this CSV (run,synthesis_threads,pool_slabs; 0: "
                                      "the default) on the one loaded key: each run's log, trace and proofs in <trace-dir>/<run>/")
      ->needs(trace_dir)
      ->excludes(proof_path, public_path, out_dir, prove->get_option("--resume"),
                 prove->get_option("--synthesis-threads"), prove->get_option("--pool-slabs"));
  add_fault_options(prove, o.engine.fake);
  zkey->needs(wtns)->excludes(key)->excludes(witness_seed);
  wtns->needs(zkey);
  r1cs->needs(zkey);
  out_dir->needs(zkey);
  prove->callback([&, partitions, proof_path, public_path] {
    run_prove(o, partitions->count() > 0, proof_path->count() + public_path->count() > 0);
  });
}

void add_verify_command(CLI::App& app, VerifyOptions& o, int& status) {
  auto* verify = app.add_subcommand("verify", "verify a snarkjs-format Groth16 proof (exit 1 when invalid)");
  verify->add_option("--vk", o.vk, "verification_key.json")->capture_default_str();
  verify->add_option("--proof", o.proof, "proof.json")->capture_default_str();
  verify->add_option("--public", o.public_inputs, "public.json")->capture_default_str();
  verify->callback([&o, &status] { status = run_verify(o); });
}

}  // namespace

int main(int argc, char** argv) {
  // Every kernel's module loaded when the CUDA context is made, not at the kernel's first launch:
  // loading one waits for all of the device's work, which in a run is another worker's copies (the
  // first partition's kernels waited up to 0.25 s beside pageable copies). Before any CUDA call;
  // a value in the environment stays.
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
  CLI::App app{"zkpipe: Groth16 over BLS12-381 on CPU and GPU, a SimGrid model of the proving "
               "pipeline, and property tests of its invariants"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "zkpipe " ZKPIPE_VERSION);
  size_t threads = worker_threads();
  app.add_option("--threads", threads, "CPU worker threads for NTT, MSM and setup (default: cores)")
      ->check(CLI::Range(1, 4096));
  int status = 0;

  SetupOptions setup_options;
  add_setup_command(app, setup_options);
  ProveOptions prove_options;
  add_prove_command(app, prove_options);
  VerifyOptions verify_options;
  add_verify_command(app, verify_options, status);

  auto* list = app.add_subcommand("circuits", "list the built-in circuits");
  list->callback([] {
    for (const auto& name : circuits::circuit_names()) fmt::print("{}\n", name);
  });
#ifdef ZKPIPE_HAVE_MODEL_COMMANDS
  add_model_commands(app);
#endif
#ifdef ZKPIPE_HAVE_SOAK_COMMAND
  add_soak_command(app);
#endif
  zkpipe::tools::read_whole_numbers_as_decimal(app);
  app.parse_complete_callback([&] { set_worker_threads(threads); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {  // a model command's failure, said already
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {  // an unknown option, a value out of range, a missing one
    fmt::print(stderr, "zkpipe: error: {} (see --help)\n", e.what());
    return 1;
  } catch (const Error& e) {
    fmt::print(stderr, "zkpipe: error: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "zkpipe: error: out of memory; choose a smaller size\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "zkpipe: error: {}\n", e.what());
    return 1;
  }
  return status;
}
