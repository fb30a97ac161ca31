// `zkpipe prove --runs`'s run list (tools/run_list.hpp): the runs in file order with their
// settings, comments and blank lines skipped, and one error naming the file and line for each kind
// of bad list.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/util/error.hpp"
#include "tools/run_list.hpp"

namespace zkpipe::tools {
namespace {
namespace fs = std::filesystem;

class RunListTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& text) const {
    const fs::path path = dir_ / "runs.csv";
    std::ofstream(path) << text;
    return path;
  }

  // The message of the error reading `text` as a run list ("" where it reads).
  std::string error_of(const std::string& text) const {
    try {
      read_run_list(write(text));
    } catch (const zk::Error& e) {
      return e.what();
    }
    return "";
  }

 private:
  fs::path dir_ = fs::temp_directory_path() / ("zkpipe-run-list-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
};

TEST_F(RunListTest, ReadsTheRunsInFileOrder) {
  const auto runs = read_run_list(write("run,synthesis_threads,pool_slabs\n# the sweep's first pass\nsweep-t16-s8,16,8\n\n"
                                        " sweep-t4-s1 , 4 , 1\nlast,0,0\n"));
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].name, "sweep-t16-s8");
  EXPECT_EQ(runs[0].synthesis_threads, 16u);
  EXPECT_EQ(runs[0].pool_slabs, 8u);
  EXPECT_EQ(runs[1].name, "sweep-t4-s1");
  EXPECT_EQ(runs[1].synthesis_threads, 4u);
  EXPECT_EQ(runs[1].pool_slabs, 1u);
  EXPECT_EQ(runs[2].name, "last");
  EXPECT_EQ(runs[2].synthesis_threads, 0u);
}

TEST_F(RunListTest, NamesTheLineOfEachBadRow) {
  EXPECT_NE(error_of("run,synthesis_threads,pool_slabs\na,1,1\na,2,2\n").find("runs.csv:3: run 'a' is listed twice"),
            std::string::npos);
  EXPECT_NE(error_of("run,synthesis_threads,pool_slabs\nx/y,1,1\n").find("runs.csv:2: run 'x/y' cannot name a folder"),
            std::string::npos);
  EXPECT_NE(error_of("run,synthesis_threads,pool_slabs\n..,1,1\n").find("cannot name a folder"), std::string::npos);
  EXPECT_NE(error_of("run,synthesis_threads,pool_slabs\na,one,1\n").find("runs.csv:2: column synthesis_threads: 'one' is not a whole number"),
            std::string::npos);
  EXPECT_NE(error_of("run,synthesis_threads,pool_slabs\na,1,-2\n").find("column pool_slabs: '-2'"), std::string::npos);
  EXPECT_NE(error_of("run,synthesis_threads,pool_slabs\na,1\n").find("not a run list"), std::string::npos);
}

TEST_F(RunListTest, RefusesAListWithoutItsHeaderOrRuns) {
  EXPECT_NE(error_of("run,synthesis_threads\na,1\n").find("Missing column \"pool_slabs\""), std::string::npos);
  EXPECT_NE(error_of("run,synthesis_threads,pool_slabs\n").find("no runs listed"), std::string::npos);
  EXPECT_NE(error_of("").find("not a run list"), std::string::npos);
  EXPECT_THROW(read_run_list("/nonexistent/runs.csv"), zk::Error);
}

}  // namespace
}  // namespace zkpipe::tools
