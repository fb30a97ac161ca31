// Jobs of many circom witnesses: every witness file is checked against the .zkey before any proof,
// each witness is one partition through the engine, each proof is verified and written under its
// witness file's name, and a wrong witness fails its own partition alone — in the library and
// through `zkpipe prove --zkey K --wtns W1 W2 ...` (exit status 1, the wrong file named, the
// others written). On tiny.circom's fixture with witnesses made here, and on the shared 2^14
// mulchain fixture where /work/shared/data/circom is present (skipped otherwise).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "engine/circom/circom_job.hpp"
#include "engine/circom/wtns_file.hpp"
#include "engine/circom/zkey_file.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/pipeline/engine.hpp"
#include "engine/util/decimal.hpp"
#include "engine/util/error.hpp"
#include "tests/circom/container_bytes.hpp"

namespace zk::circom {
namespace {

namespace fs = std::filesystem;
const fs::path fixtures = ZKPIPE_CIRCOM_FIXTURES;
const fs::path shared_circom = ZKPIPE_SHARED_CIRCOM;
const fs::path zkpipe_binary = ZKPIPE_BINARY;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A fresh folder in the temporary folder, removed at the end of the test.
class TempDir {
 public:
  explicit TempDir(std::string_view name)
      : path_(fs::temp_directory_path() / fmt::format("zkpipe-circom-batch-{}-{}", ::getpid(), name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// tiny.circom's witness for inputs a, b: z = (1, c = a*b, b, a, d = c*c + a), written over the
// fixture's header as circom writes it; `wrong` breaks constraint 1 (d off by one).
fs::path tiny_witness(const fs::path& dir, const std::string& name, uint64_t a, uint64_t b, bool wrong = false) {
  std::string bytes = slurp(fixtures / "tiny.wtns");
  const Fr fa = Fr::from_u64(a), fb = Fr::from_u64(b), c = fa * fb;
  Fr d = c * c + fa;
  if (wrong) d = d + Fr::one();
  const uint64_t first = test::payload_offset(bytes, 2);  // section 2: the values
  const Fr z[] = {Fr::one(), c, fb, fa, d};
  for (size_t i = 0; i < std::size(z); ++i) {
    uint64_t limbs[4];
    z[i].to_canonical(limbs);
    std::memcpy(bytes.data() + first + 32 * i, limbs, 32);
  }
  const fs::path path = dir / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// `zkpipe ARGS`: its exit status and what it printed (stdout and stderr).
struct CommandResult {
  int status = -1;
  std::string output;
};
CommandResult run_zkpipe(const std::string& args, const fs::path& dir) {
  const fs::path log = dir / "zkpipe.log";
  const std::string command = fmt::format("'{}' {} > '{}' 2>&1", zkpipe_binary.string(), args, log.string());
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(log)};
}

// The proof and public inputs written for a witness verify under the key's verifying key, and
// the public inputs are the witness's (z[1..num_public]).
void expect_verified_outputs(const groth16::ProvingKey& pk, const ProofOutputs& outputs, const fs::path& wtns) {
  ASSERT_TRUE(fs::exists(outputs.proof)) << outputs.proof;
  ASSERT_TRUE(fs::exists(outputs.public_inputs)) << outputs.public_inputs;
  const auto proof = groth16::read_proof_json(outputs.proof);
  const auto publics = groth16::read_public_json(outputs.public_inputs);
  const auto z = read_witness(wtns);
  EXPECT_EQ(publics, std::vector<Fr>(z.begin() + 1, z.begin() + 1 + pk.num_public)) << wtns;
  const auto verdict = groth16::verify(pk.verifying_key(), proof, publics);
  EXPECT_TRUE(verdict) << wtns << ": " << verdict.reason;
}

template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a zk::Error";
  return {};
}

TEST(CircomBatch, EveryWitnessFileIsCheckedAgainstTheKeyBeforeProving) {
  TempDir dir("check");
  const auto zkey = ZkeyFile::open(fixtures / "tiny.zkey");
  const std::vector<fs::path> good = {tiny_witness(dir.path(), "a.wtns", 3, 11), tiny_witness(dir.path(), "b.wtns", 5, 7)};
  EXPECT_NO_THROW(check_witnesses_fit_key(zkey, good));
  std::string truncated = slurp(good[0]);
  truncated.resize(100);
  std::ofstream(dir.path() / "truncated.wtns", std::ios::binary) << truncated;
  std::string longer = slurp(good[0]);  // six values where the key has five variables
  const uint64_t first = test::payload_offset(longer, 2);
  const uint32_t six = 6;
  const uint64_t section_bytes = 6 * 32;
  std::memcpy(longer.data() + first - 12 - 4, &six, 4);            // the header's count (its last field)
  std::memcpy(longer.data() + first - 8, &section_bytes, 8);       // the values section's length
  longer += std::string(32, '\0');
  std::ofstream(dir.path() / "longer.wtns", std::ios::binary) << longer;
  const std::vector<fs::path> mixed = {good[0], dir.path() / "truncated.wtns", good[1], dir.path() / "longer.wtns",
                                       dir.path() / "missing.wtns"};
  const std::string message = error_of([&] { check_witnesses_fit_key(zkey, mixed); });
  for (const std::string part : {"3 of 5 witness files do not fit", "nothing was proved", "truncated.wtns",
                                 "longer.wtns: the witness has 6 values", "5 variables", "missing.wtns"})
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  EXPECT_EQ(message.find("a.wtns"), std::string::npos) << message;
}

TEST(CircomBatch, ProofsAreNamedAfterTheirWitnessesAndNeverOverwriteEachOther) {
  const std::vector<fs::path> witnesses = {"in/alice.wtns", "bob.wtns", "other/carol.witness.wtns"};
  const auto outputs = witness_outputs(witnesses, "out");
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0].proof, fs::path("out/alice.proof.json"));
  EXPECT_EQ(outputs[0].public_inputs, fs::path("out/alice.public.json"));
  EXPECT_EQ(outputs[2].proof, fs::path("out/carol.witness.proof.json"));
  const std::string message = error_of([] { witness_outputs(std::vector<fs::path>{"a/w.wtns", "b/w.wtns"}, "out"); });
  for (const std::string part : {"a/w.wtns", "b/w.wtns", "out/w.proof.json", "rename one"})
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

// run_job over a circom job: what each partition became.
struct BatchRun {
  pipeline::JobReport report;
  std::map<uint32_t, std::vector<Fr>> publics;  // partition -> public inputs of its verified proof
};
BatchRun prove_batch(const groth16::ProvingKey& pk, const fs::path& zkey, const std::vector<fs::path>& witnesses,
                     const std::optional<fs::path>& r1cs) {
  pipeline::Settings settings;
  settings.backend = "cpu";
  settings.synthesis_threads = 2;
  settings.retry_limit = 1;
  settings.host_budget_bytes = uint64_t{1} << 30;
  BatchRun run;
  std::mutex mutex;
  run.report = pipeline::run_job(pipeline::circom_job(zkey, witnesses, r1cs, pk), settings,
                                 [&](const pipeline::ProvedPartition& proved) {
                                   EXPECT_TRUE(groth16::verify(pk.verifying_key(), proved.proof, proved.public_inputs));
                                   std::lock_guard lock(mutex);
                                   run.publics[proved.partition] = proved.public_inputs;
                                 },
                                 {"circom-batch", nullptr});
  return run;
}

TEST(CircomBatch, ThreeWitnessesFlowThroughTheEngineAsThreePartitions) {
  TempDir dir("engine");
  const auto pk = ZkeyFile::open(fixtures / "tiny.zkey").proving_key();
  const std::vector<fs::path> witnesses = {tiny_witness(dir.path(), "a.wtns", 3, 11),
                                           tiny_witness(dir.path(), "b.wtns", 5, 7),
                                           tiny_witness(dir.path(), "c.wtns", 2, 13)};
  const BatchRun run = prove_batch(pk, fixtures / "tiny.zkey", witnesses, fixtures / "tiny.r1cs");
  EXPECT_EQ(run.report.partitions, 3u);
  EXPECT_EQ(run.report.proved, 3u);
  ASSERT_EQ(run.publics.size(), 3u);
  // public inputs (c = a*b, b): each partition proved its own witness
  EXPECT_EQ(to_decimal(run.publics.at(0)[0]), "33");
  EXPECT_EQ(to_decimal(run.publics.at(1)[0]), "35");
  EXPECT_EQ(to_decimal(run.publics.at(2)[0]), "26");
  EXPECT_EQ(to_decimal(run.publics.at(2)[1]), "13");
}

TEST(CircomBatch, AWrongWitnessFailsItsPartitionAloneWithOrWithoutTheR1cs) {
  TempDir dir("wrong");
  const auto pk = ZkeyFile::open(fixtures / "tiny.zkey").proving_key();
  const std::vector<fs::path> witnesses = {tiny_witness(dir.path(), "a.wtns", 3, 11),
                                           tiny_witness(dir.path(), "wrong.wtns", 4, 4, /*wrong=*/true),
                                           tiny_witness(dir.path(), "c.wtns", 2, 13)};
  for (const bool with_r1cs : {true, false}) {
    SCOPED_TRACE(with_r1cs ? "with --r1cs" : "without --r1cs");
    const BatchRun run = prove_batch(pk, fixtures / "tiny.zkey", witnesses,
                                     with_r1cs ? std::optional(fixtures / "tiny.r1cs") : std::nullopt);
    EXPECT_EQ(run.report.proved, 2u);
    ASSERT_EQ(run.report.failed.size(), 1u);
    EXPECT_EQ(run.report.failed[0].partition, 1u);
    EXPECT_NE(run.report.failed[0].last_error.find(with_r1cs ? "does not satisfy constraint 1" : "did not verify"),
              std::string::npos) << run.report.failed[0].last_error;
    EXPECT_EQ(run.publics.count(1), 0u);
  }
}

TEST(CircomCli, ThreeWitnessesGiveThreeVerifiedProofsNamedAfterThem) {
  TempDir dir("cli");
  const auto pk = ZkeyFile::open(fixtures / "tiny.zkey").proving_key();
  const std::vector<fs::path> witnesses = {tiny_witness(dir.path(), "a.wtns", 3, 11),
                                           tiny_witness(dir.path(), "b.wtns", 5, 7),
                                           tiny_witness(dir.path(), "c.wtns", 2, 13)};
  const fs::path out = dir.path() / "proofs";
  const auto result = run_zkpipe(
      fmt::format("prove --backend cpu --zkey '{}' --r1cs '{}' --wtns '{}' '{}' --wtns '{}' --out-dir '{}'",
                  (fixtures / "tiny.zkey").string(), (fixtures / "tiny.r1cs").string(), witnesses[0].string(),
                  witnesses[1].string(), witnesses[2].string(), out.string()),
      dir.path());
  ASSERT_EQ(result.status, 0) << result.output;
  const auto outputs = witness_outputs(witnesses, out);
  for (size_t i = 0; i < witnesses.size(); ++i) expect_verified_outputs(pk, outputs[i], witnesses[i]);
  EXPECT_NE(result.output.find("3 of 3 witnesses proved"), std::string::npos) << result.output;
}

TEST(CircomCli, ACorruptedWitnessIsReportedByNameAndTheOthersAreWritten) {
  TempDir dir("cli-wrong");
  const auto pk = ZkeyFile::open(fixtures / "tiny.zkey").proving_key();
  const fs::path good_a = tiny_witness(dir.path(), "a.wtns", 3, 11), good_c = tiny_witness(dir.path(), "c.wtns", 2, 13);
  const fs::path wrong = tiny_witness(dir.path(), "wrong.wtns", 4, 4, /*wrong=*/true);
  for (const bool with_r1cs : {true, false}) {
    SCOPED_TRACE(with_r1cs ? "with --r1cs" : "without --r1cs");
    const fs::path out = dir.path() / (with_r1cs ? "with-r1cs" : "without-r1cs");
    const auto result = run_zkpipe(
        fmt::format("prove --backend cpu --retries 0 --zkey '{}' {} --wtns '{}' '{}' '{}' --out-dir '{}'",
                    (fixtures / "tiny.zkey").string(),
                    with_r1cs ? fmt::format("--r1cs '{}'", (fixtures / "tiny.r1cs").string()) : std::string(),
                    good_a.string(), wrong.string(), good_c.string(), out.string()),
        dir.path());
    EXPECT_EQ(result.status, 1) << result.output;
    EXPECT_NE(result.output.find(fmt::format("zkpipe: error: 1 of 3 partitions failed (2 proved and written)")),
              std::string::npos) << result.output;
    EXPECT_NE(result.output.find(fmt::format("witness {}: no proof written", wrong.string())), std::string::npos)
        << result.output;
    expect_verified_outputs(pk, {out / "a.proof.json", out / "a.public.json"}, good_a);
    expect_verified_outputs(pk, {out / "c.proof.json", out / "c.public.json"}, good_c);
    EXPECT_FALSE(fs::exists(out / "wrong.proof.json"));
    EXPECT_FALSE(fs::exists(out / "wrong.public.json"));
  }
}

TEST(CircomCli, WitnessesOfAnotherCircuitAreRefusedBeforeAnyProof) {
  TempDir dir("cli-unfit");
  const fs::path good = tiny_witness(dir.path(), "a.wtns", 3, 11);
  std::ofstream(dir.path() / "empty.wtns") << "";
  const fs::path out = dir.path() / "proofs";
  const auto result = run_zkpipe(fmt::format("prove --backend cpu --zkey '{}' --wtns '{}' '{}' --out-dir '{}'",
                                             (fixtures / "tiny.zkey").string(), good.string(),
                                             (dir.path() / "empty.wtns").string(), out.string()),
                                 dir.path());
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("1 of 2 witness files do not fit"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("empty.wtns"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(out / "a.proof.json"));
}

// The shared 2^14 mulchain fixture (circom2 + snarkjs): two copies of its witness under other
// names and a third with its last value changed; with --r1cs the third is refused by name.
TEST(CircomCli, SharedMulchainFixtureProvesSeveralWitnesses) {
  const fs::path fixture = shared_circom / "mulchain_16000";
  if (!fs::exists(fixture / "mulchain_16000_final.zkey") || !fs::exists(fixture / "witness.wtns"))
    GTEST_SKIP() << fixture << " is absent (the shared data folder is optional)";
  TempDir dir("mulchain");
  const fs::path first = dir.path() / "first.wtns", second = dir.path() / "second.wtns", wrong = dir.path() / "wrong.wtns";
  fs::copy_file(fixture / "witness.wtns", first);
  fs::copy_file(fixture / "witness.wtns", second);
  std::string bytes = slurp(fixture / "witness.wtns");
  bytes[bytes.size() - 32] ^= 1;  // the last value's lowest bit: still below r, no longer a witness
  std::ofstream(wrong, std::ios::binary) << bytes;
  const fs::path out = dir.path() / "proofs";
  const auto result = run_zkpipe(
      fmt::format("prove --backend cpu --retries 0 --zkey '{}' --r1cs '{}' --wtns '{}' '{}' '{}' --out-dir '{}'",
                  (fixture / "mulchain_16000_final.zkey").string(), (fixture / "mulchain_16000.r1cs").string(),
                  first.string(), wrong.string(), second.string(), out.string()),
      dir.path());
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find(fmt::format("witness {}: no proof written", wrong.string())), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("does not satisfy constraint"), std::string::npos) << result.output;
  const auto pk = ZkeyFile::open(fixture / "mulchain_16000_final.zkey").proving_key();
  expect_verified_outputs(pk, {out / "first.proof.json", out / "first.public.json"}, first);
  expect_verified_outputs(pk, {out / "second.proof.json", out / "second.public.json"}, second);
  EXPECT_FALSE(fs::exists(out / "wrong.proof.json"));
}

}  // namespace
}  // namespace zk::circom
