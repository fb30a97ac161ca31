// zkpipe — the command line: set up, prove and verify Groth16 proofs of the built-in circuits
// (and, where the model is built, simulate, sweep, calibrate, compare and report).
// Every user error becomes one "zkpipe: error: ..." line and exit status 1, here and only here.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <random>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "engine/circom/circom_job.hpp"
#include "engine/circuits/circuit.hpp"
#include "engine/groth16/backend_registry.hpp"
#include "engine/groth16/keys.hpp"
#include "engine/groth16/prover.hpp"
#include "engine/groth16/setup.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "engine/util/error.hpp"
#include "engine/util/machine.hpp"
#include "engine/util/rng.hpp"
#include "kernels/util/parallel.hpp"
#ifdef ZKPIPE_HAVE_MODEL_COMMANDS
#include "tools/model_commands.hpp"
using zkpipe::tools::add_model_commands;
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
};

void run_setup(const SetupOptions& o) {
  auto circuit = circuits::make_circuit({o.circuit, o.constraints});
  check_fits(estimated_setup_bytes(o.constraints), "setup");
  fs::create_directories(o.out_dir);
  fmt::print("setup: circuit {} (target {} constraints), {} threads\n", o.circuit, o.constraints, worker_threads());
  fmt::print("setup: WARNING toxic waste derived from seed {}: for testing and benchmarks only, "
             "anyone with the seed can forge proofs\n", o.seed);
  auto t0 = Clock::now();
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, /*witness_seed=*/0);
  r1cs::R1cs r1cs = builder.take();
  fmt::print("setup: {} constraints, {} public inputs, {} variables, domain 2^{} ({:.2f} s)\n",
             r1cs.constraints.size(), r1cs.num_public, r1cs.num_vars,
             r1cs::domain_lg_size(r1cs.constraints.size(), r1cs.num_public), seconds_since(t0));
  auto last = Clock::now();
  auto pk = groth16::setup(r1cs, groth16::ToxicWaste::from_seed(o.seed), circuit->spec(),
                           [&](std::string_view step) {
                             fmt::print("setup:   {} (+{:.2f} s)\n", step, seconds_since(last));
                             std::fflush(stdout);
                             last = Clock::now();
                           });
  fs::path key = o.out_dir / "proving.key", vk = o.out_dir / "verification_key.json";
  groth16::write_proving_key(pk, key);
  groth16::write_verifying_key_json(pk.verifying_key(), vk);
  fmt::print("setup: wrote {} ({}) and {} in {:.2f} s\n", key.string(), format_bytes(pk.bytes()),
             vk.string(), seconds_since(t0));
}

struct ProveOptions {
  fs::path key = "zkpipe-keys/proving.key";
  uint64_t witness_seed = 7;
  std::string backend = "cpu";
  fs::path proof = "proof.json", public_inputs = "public.json";
  // A circom circuit instead of a built-in one: snarkjs's .zkey, circom's .wtns, optionally the .r1cs.
  fs::path zkey, wtns;
  std::optional<fs::path> r1cs;
};

void print_phases(const PhaseLog& log) {
  std::map<std::string, std::pair<double, uint64_t>> totals;
  std::vector<std::string> order;
  for (const auto& s : log.spans()) {
    if (!totals.count(s.phase)) order.push_back(s.phase);
    totals[s.phase].first += s.seconds();
    totals[s.phase].second += s.items;
  }
  fmt::print("  {:<10} {:>10} {:>12}\n", "phase", "ms", "items");
  for (const auto& p : order) fmt::print("  {:<10} {:>10.1f} {:>12}\n", p, totals[p].first * 1e3, totals[p].second);
}

// The part of proving shared by built-in and circom circuits: prove from rows a, b, c and
// assignment z, verify, print the phases, and write the JSON only for a proof that verifies.
void prove_verify_write(groth16::ProverBackend& backend, const groth16::ProvingKey& pk, std::vector<Fr>& a,
                        std::vector<Fr>& b, std::vector<Fr>& c, const std::vector<Fr>& z, PhaseLog& log,
                        Clock::time_point start, const ProveOptions& o) {
  auto split = groth16::split_witness(z);
  Rng blinding(std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32));
  auto proof = groth16::prove(backend, pk, a, b, c, z, blinding.field<Fr>(), blinding.field<Fr>(), &log);
  std::span<const Fr> publics(z.data() + 1, pk.num_public);
  groth16::Verdict verdict = [&] {
    auto scope = timed(&log, "verify", 1);
    return groth16::verify(pk.verifying_key(), proof, publics);
  }();
  double total = seconds_since(start);
  fmt::print("prove: witness {} variables: {} zero, {} one, {} other ({:.0f}% zero or one)\n", z.size(),
             split.zeros, split.ones.size(), split.significant.size(),
             100.0 * (split.zeros + split.ones.size()) / z.size());
  print_phases(log);
  if (!verdict) fail("the proof did not verify ({}); nothing was written. With --zkey, the witness may be wrong "
                     "(give --r1cs to find the failing constraint); otherwise this is a bug: please report it",
                     verdict.reason);
  groth16::write_proof_json(proof, o.proof);
  groth16::write_public_json(publics, o.public_inputs);
  fmt::print("prove: proof verified; wrote {} and {} ({:.2f} s total)\n", o.proof.string(),
             o.public_inputs.string(), total);
}

void run_prove_builtin(const ProveOptions& o) {
  auto t0 = Clock::now();
  auto backend = groth16::make_backend(o.backend);
  auto pk = groth16::read_proving_key(o.key);
  check_fits(3 * pk.domain_size() * sizeof(Fr) + pk.num_vars * sizeof(Fr), "proving");
  auto circuit = circuits::make_circuit(pk.circuit);
  fmt::print("prove: key {} ({}, circuit {} {}, domain 2^{}) loaded in {:.2f} s; backend {}, {} threads\n",
             o.key.string(), format_bytes(pk.bytes()), pk.circuit.name, pk.circuit.target_constraints,
             pk.lg_domain, seconds_since(t0), o.backend, worker_threads());
  backend->prepare(pk);
  PhaseLog log;
  auto start = Clock::now();
  std::vector<Fr> a(pk.domain_size()), b(pk.domain_size()), c(pk.domain_size());
  auto z = groth16::synthesize(*circuit, o.witness_seed, pk, a, b, c, &log);
  prove_verify_write(*backend, pk, a, b, c, z, log, start, o);
}

void run_prove_circom(const ProveOptions& o) {
  auto t0 = Clock::now();
  auto backend = groth16::make_backend(o.backend);
  auto zkey = circom::ZkeyFile::open(o.zkey);
  check_fits(3 * zkey.header().domain_size() * sizeof(Fr) + zkey.header().num_vars * sizeof(Fr), "proving");
  auto pk = zkey.proving_key();
  fmt::print("prove: zkey {} ({}, circom circuit of {} constraints, {} public, domain 2^{}) loaded in {:.2f} s; "
             "backend {}, {} threads\n", o.zkey.string(), format_bytes(pk.bytes()), pk.num_constraints,
             pk.num_public, pk.lg_domain, seconds_since(t0), o.backend, worker_threads());
  backend->prepare(pk);
  PhaseLog log;
  auto start = Clock::now();
  auto rows = circom::circom_rows(zkey, o.wtns, o.r1cs, &log);
  if (o.r1cs) fmt::print("prove: all {} constraints of {} hold for {}\n", pk.num_constraints, o.r1cs->string(), o.wtns.string());
  prove_verify_write(*backend, pk, rows.a, rows.b, rows.c, rows.z, log, start, o);
}

void run_prove(const ProveOptions& o) {
  if (o.zkey.empty()) run_prove_builtin(o);
  else run_prove_circom(o);
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zkpipe: Groth16 over BLS12-381 on CPU and GPU, a SimGrid model of the proving "
               "pipeline, and property tests of its invariants"};
  app.require_subcommand(1);
  size_t threads = worker_threads();
  app.add_option("--threads", threads, "CPU worker threads for NTT, MSM and setup")
      ->check(CLI::Range(1, 4096))->capture_default_str();
  int status = 0;

  SetupOptions setup_options;
  auto* setup = app.add_subcommand("setup", "make a proving key and verifying key (seeded toxic waste: testing only)");
  setup->add_option("--circuit", setup_options.circuit, "built-in circuit: poseidon-merkle or dense")->capture_default_str();
  setup->add_option("--constraints", setup_options.constraints, "target constraint count")->capture_default_str();
  setup->add_option("--seed", setup_options.seed, "seed of the toxic waste")->capture_default_str();
  setup->add_option("--out-dir", setup_options.out_dir, "folder for proving.key and verification_key.json")->capture_default_str();
  setup->callback([&] { run_setup(setup_options); });

  ProveOptions prove_options;
  auto* prove = app.add_subcommand("prove", "synthesize a witness, prove, verify, and write snarkjs JSON");
  auto* key = prove->add_option("--key", prove_options.key, "proving key from `zkpipe setup`")->capture_default_str();
  auto* witness_seed = prove->add_option("--witness-seed", prove_options.witness_seed, "seed of the built-in circuit's witness")->capture_default_str();
  prove->add_option("--backend", prove_options.backend, "cpu or cuda")->capture_default_str();
  prove->add_option("--proof", prove_options.proof, "proof output (snarkjs proof.json)")->capture_default_str();
  prove->add_option("--public", prove_options.public_inputs, "public inputs output (snarkjs public.json)")->capture_default_str();
  auto* zkey = prove->add_option("--zkey", prove_options.zkey, "prove a circom circuit: snarkjs Groth16 .zkey (bls12381)");
  auto* wtns = prove->add_option("--wtns", prove_options.wtns, "the circom witness (.wtns) to prove with --zkey");
  auto* r1cs = prove->add_option("--r1cs", prove_options.r1cs, "the circuit's .r1cs: check every constraint before proving");
  zkey->needs(wtns)->excludes(key)->excludes(witness_seed);
  wtns->needs(zkey);
  r1cs->needs(zkey);
  prove->callback([&] { run_prove(prove_options); });

  VerifyOptions verify_options;
  auto* verify = app.add_subcommand("verify", "verify a snarkjs-format Groth16 proof (exit 1 when invalid)");
  verify->add_option("--vk", verify_options.vk, "verification_key.json")->capture_default_str();
  verify->add_option("--proof", verify_options.proof, "proof.json")->capture_default_str();
  verify->add_option("--public", verify_options.public_inputs, "public.json")->capture_default_str();
  verify->callback([&] { status = run_verify(verify_options); });

  auto* list = app.add_subcommand("circuits", "list the built-in circuits");
  list->callback([] {
    for (const auto& name : circuits::circuit_names()) fmt::print("{}\n", name);
  });
#ifdef ZKPIPE_HAVE_MODEL_COMMANDS
  add_model_commands(app);
#endif
  app.parse_complete_callback([&] { set_worker_threads(threads); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
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
