// write_file_atomically: the new content appears whole or not at all. A writer that throws, a
// folder that does not exist and a writer SIGKILLed mid-write all leave the old file as it was
// and, after remove_stale_partials, nothing else.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "engine/util/atomic_file.hpp"
#include "engine/util/error.hpp"

namespace zk {
namespace {
namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zkpipe-atomic-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> names() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir_)) found.push_back(entry.path().filename().string());
    std::ranges::sort(found);
    return found;
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  fs::path dir_;
};

TEST_F(AtomicFile, WritesTheWholeContentAndLeavesNoTemporary) {
  write_text_atomically(dir_ / "proof.json", "old");
  write_text_atomically(dir_ / "proof.json", "new content");
  EXPECT_EQ(read(dir_ / "proof.json"), "new content");
  EXPECT_EQ(names(), std::vector<std::string>{"proof.json"});
}

TEST_F(AtomicFile, AWriterThatThrowsChangesNothing) {
  write_text_atomically(dir_ / "key", "old");
  EXPECT_THROW(write_file_atomically(dir_ / "key",
                                     [](std::ostream& out) {
                                       out << "half of it";
                                       throw std::runtime_error("synthesis failed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(read(dir_ / "key"), "old");
  EXPECT_EQ(names(), std::vector<std::string>{"key"});
}

TEST_F(AtomicFile, AMissingFolderIsOneErrorNamingTheFile) {
  const fs::path path = dir_ / "no-such-folder" / "trace.csv";
  try {
    write_text_atomically(path, "x");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("check the folder exists"), std::string::npos) << e.what();
  }
}

TEST_F(AtomicFile, AWriterKilledMidWriteLeavesTheOldFileAndOnlyAPartial) {
  const fs::path path = dir_ / "proof-3.json";
  write_text_atomically(path, "old");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    write_file_atomically(path, [&](std::ostream& out) {
      out << std::string(1 << 20, 'x') << std::flush;
      (void)!::write(ready[1], "w", 1);
      ::pause();  // killed here, mid-write
    });
    ::_exit(0);
  }
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]), ::close(ready[1]);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(read(path), "old");
  ASSERT_EQ(names().size(), 2u);
  write_text_atomically(dir_ / "proof-30.json", "another file's");  // not a partial of proof-3.json
  EXPECT_EQ(remove_stale_partials(path), 1u);
  EXPECT_EQ(names(), (std::vector<std::string>{"proof-3.json", "proof-30.json"}));
}

TEST(PartialNames, BelongToTheirFileOnly) {
  EXPECT_TRUE(is_partial_of("out/.proof.json.123-0.partial", "out/proof.json"));
  EXPECT_FALSE(is_partial_of("out/.proof.json.partial", "out/proof.json"));
  EXPECT_FALSE(is_partial_of("other/.proof.json.123-0.partial", "out/proof.json"));
  EXPECT_FALSE(is_partial_of("out/.proof.json.123-0.partial", "out/proof"));
  EXPECT_FALSE(is_partial_of("out/proof.json", "out/proof.json"));
}

}  // namespace
}  // namespace zk
