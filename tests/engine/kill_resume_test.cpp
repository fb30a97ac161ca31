// Kill and resume: `zkpipe prove --resume` jobs (a built-in circuit's --partitions, a circom job
// of one witness file per partition) SIGKILLed at random points, over and over. After every kill,
// every proof or public file under its final name is whole, and no verified proof has been lost
// or rewritten; any other file is a temporary of a killed write. After each round's last run (one
// that was not killed) every partition has exactly one verified proof and nothing else is in the
// folder. Kills in all: ZKPIPE_KILL_RESUME_CYCLES, half for each job kind (default 100; a soak
// runs 1000); the seed of the kill points is ZKPIPE_KILL_RESUME_SEED or the clock, printed to
// replay a failure.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "engine/circom/circom_job.hpp"
#include "engine/circom/zkey_file.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/util/atomic_file.hpp"

namespace zk {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const fs::path zkpipe_binary = ZKPIPE_BINARY, fixtures = ZKPIPE_CIRCOM_FIXTURES;

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value ? std::stoull(value) : fallback;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Starts zkpipe with `args`, its output discarded.
pid_t start_zkpipe(const std::vector<std::string>& args) {
  const pid_t child = ::fork();
  if (child != 0) return child;
  std::vector<char*> argv{const_cast<char*>(zkpipe_binary.c_str())};
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::freopen("/dev/null", "w", stdout);
  std::freopen("/dev/null", "w", stderr);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

// Runs zkpipe to its end; its exit status.
int run_zkpipe(const std::vector<std::string>& args) {
  int status = 0;
  ::waitpid(start_zkpipe(args), &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Figures {
  uint64_t kills = 0, kills_mid_write = 0, rounds = 0, verified_proofs = 0, lost = 0, rewritten = 0,
           partial_under_final_name = 0, stray_files = 0;
};

// One kind of job, its output folder and what the kills have left in it so far.
class KilledJob {
 public:
  KilledJob(std::vector<std::string> args, std::vector<circom::ProofOutputs> outputs, groth16::VerifyingKey vk)
      : args_(std::move(args)), outputs_(std::move(outputs)), vk_(std::move(vk)) {
    args_.push_back("--resume");
  }

  // Kills resumed runs at uniform points of [0, full_run) until one finishes; checks after each.
  void run_round(std::mt19937_64& random, Clock::duration full_run, Figures& figures, uint64_t kills_wanted) {
    fs::remove_all(folder()), fs::create_directories(folder());
    verified_.clear();
    ++figures.rounds;
    for (;;) {
      const pid_t child = start_zkpipe(args_);
      std::this_thread::sleep_for(std::uniform_int_distribution<Clock::rep>(0, full_run.count())(random) * Clock::duration(1));
      int status = 0;
      if (::waitpid(child, &status, WNOHANG) != child) {
        if (figures.kills < kills_wanted) ::kill(child, SIGKILL);  // else the round's last run ends as it will
        ::waitpid(child, &status, 0);
      }
      const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
      figures.kills += killed;
      if (check_after_kill(figures) && killed) ++figures.kills_mid_write;
      if (!killed) {
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a resumed run failed, status " << status;
        check_complete(figures);
        return;
      }
    }
  }

  // One run of the whole job into an empty folder, not killed: the span the kills are drawn from.
  Clock::duration time_whole_run() {
    fs::remove_all(folder()), fs::create_directories(folder());
    const auto start = Clock::now();
    EXPECT_EQ(run_zkpipe(args_), 0) << "the job does not run to its end";
    return Clock::now() - start;
  }

  fs::path folder() const { return outputs_.front().proof.parent_path(); }

 private:
  // Files under their final names are whole; verified proofs stay; anything else is a temporary.
  // Whether a killed write left a temporary.
  bool check_after_kill(Figures& figures) {
    std::set<fs::path> expected;
    for (uint32_t partition = 0; partition < outputs_.size(); ++partition) {
      const auto& files = outputs_[partition];
      expected.insert(files.proof), expected.insert(files.public_inputs);
      const bool both = fs::exists(files.proof) && fs::exists(files.public_inputs);
      if (auto known = verified_.find(partition); known != verified_.end()) {
        if (!both) ++figures.lost;
        else if (slurp(files.proof) != known->second) ++figures.rewritten;
        continue;
      }
      if (fs::exists(files.proof) && !parses([&] { groth16::read_proof_json(files.proof); })) ++figures.partial_under_final_name;
      if (fs::exists(files.public_inputs) && !parses([&] { groth16::read_public_json(files.public_inputs); }))
        ++figures.partial_under_final_name;
      if (both && verifies(files)) verified_[partition] = slurp(files.proof), ++figures.verified_proofs;
    }
    bool partials = false;
    for (const auto& entry : fs::directory_iterator(folder())) {
      if (expected.contains(entry.path())) continue;
      const bool partial = std::ranges::any_of(expected, [&](const fs::path& output) { return is_partial_of(entry.path(), output); });
      partials |= partial;
      if (!partial) ++figures.stray_files;
    }
    return partials;
  }

  // Exactly one verified proof per partition, and no other file.
  void check_complete(Figures& figures) {
    check_after_kill(figures);
    EXPECT_EQ(verified_.size(), outputs_.size()) << "partitions without a verified proof after the last run";
    const auto entries = std::distance(fs::directory_iterator(folder()), fs::directory_iterator());
    EXPECT_EQ(size_t(entries), 2 * outputs_.size()) << "files beyond one proof and one public file per partition";
  }

  template <class Read>
  static bool parses(Read&& read) {
    try {
      read();
      return true;
    } catch (const Error&) {
      return false;
    }
  }
  bool verifies(const circom::ProofOutputs& files) const {
    return bool(groth16::verify(vk_, groth16::read_proof_json(files.proof), groth16::read_public_json(files.public_inputs)));
  }

  std::vector<std::string> args_;
  std::vector<circom::ProofOutputs> outputs_;
  groth16::VerifyingKey vk_;
  std::map<uint32_t, std::string> verified_;  // partition -> its proof file's content
};

class KillAndResume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    work_ = fs::temp_directory_path() / ("zkpipe-kill-resume-" + std::to_string(::getpid()));
    fs::remove_all(work_), fs::create_directories(work_);
  }
  static void TearDownTestSuite() { fs::remove_all(work_); }

  // Times one whole run, then kills and resumes rounds until the wanted kills are done.
  static void kill_and_resume(KilledJob& job, const std::string& kind) {
    const uint64_t kills = (env_or("ZKPIPE_KILL_RESUME_CYCLES", 100) + 1) / 2;  // half for each job kind
    const uint64_t seed = env_or("ZKPIPE_KILL_RESUME_SEED", uint64_t(Clock::now().time_since_epoch().count()));
    std::mt19937_64 random(seed);
    const auto start = Clock::now();
    Figures figures;
    const Clock::duration full_run = job.time_whole_run();
    while (figures.kills < kills && !::testing::Test::HasFatalFailure()) job.run_round(random, full_run, figures, kills);
    std::printf("kill-and-resume %s (seed %llu; ZKPIPE_KILL_RESUME_SEED draws the same kill points): %llu kills (%llu mid-write) in %llu rounds, "
                "%.2f s a whole run, %.1f s in all; proofs verified %llu, lost %llu, rewritten %llu, partial under "
                "their final name %llu, stray files %llu\n",
                kind.c_str(), (unsigned long long)seed, (unsigned long long)figures.kills, (unsigned long long)figures.kills_mid_write,
                (unsigned long long)figures.rounds, std::chrono::duration<double>(full_run).count(),
                std::chrono::duration<double>(Clock::now() - start).count(), (unsigned long long)figures.verified_proofs,
                (unsigned long long)figures.lost, (unsigned long long)figures.rewritten,
                (unsigned long long)figures.partial_under_final_name, (unsigned long long)figures.stray_files);
    EXPECT_GE(figures.kills, kills);
    EXPECT_EQ(figures.lost, 0u);
    EXPECT_EQ(figures.rewritten, 0u);
    EXPECT_EQ(figures.partial_under_final_name, 0u);
    EXPECT_EQ(figures.stray_files, 0u);
  }
  static inline fs::path work_;
};

TEST_F(KillAndResume, BuiltInCircuitPartitions) {
  const fs::path keys = work_ / "keys", out = work_ / "builtin";
  ASSERT_EQ(run_zkpipe({"setup", "--circuit", "dense", "--constraints", "64", "--out-dir", keys.string()}), 0);
  const uint32_t partitions = 8;
  std::vector<circom::ProofOutputs> outputs;
  for (uint32_t i = 0; i < partitions; ++i)
    outputs.push_back({out / fmt::format("proof-{}.json", i), out / fmt::format("public-{}.json", i)});
  KilledJob job({"prove", "--key", (keys / "proving.key").string(), "--backend", "cpu", "--partitions",
                 std::to_string(partitions), "--proof", (out / "proof.json").string(), "--public",
                 (out / "public.json").string()},
                outputs, groth16::read_verifying_key_json(keys / "verification_key.json"));
  kill_and_resume(job, "built-in dense, 8 partitions");
}

TEST_F(KillAndResume, CircomWitnessFiles) {
  const fs::path witnesses = work_ / "witnesses", out = work_ / "circom";
  fs::create_directories(witnesses);
  std::vector<fs::path> wtns;
  std::vector<std::string> args{"prove", "--zkey", (fixtures / "tiny.zkey").string(), "--backend", "cpu",
                                "--out-dir", out.string(), "--wtns"};
  for (const char* name : {"alice", "bob", "carol", "dave", "erin", "frank"}) {
    wtns.push_back(witnesses / (std::string(name) + ".wtns"));
    fs::copy_file(fixtures / "tiny.wtns", wtns.back());
    args.push_back(wtns.back().string());
  }
  KilledJob job(args, circom::witness_outputs(wtns, out),
                circom::ZkeyFile::open(fixtures / "tiny.zkey").proving_key().verifying_key());
  kill_and_resume(job, "circom tiny, 6 witness files");
}

}  // namespace
}  // namespace zk
