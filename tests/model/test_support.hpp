// Contract: helpers shared by the model tests: the repository root, a scratch directory that is
// removed with its contents, and a small valid scenario text to vary.
#pragma once

#include <filesystem>
#include <random>
#include <string>

#include "tests/model/small_costs.hpp"

namespace zkpipe::model::testing {

inline std::filesystem::path source_dir() { return ZKPIPE_SOURCE_DIR; }

class ScratchDirectory {
 public:
  ScratchDirectory() {
    path_ = std::filesystem::temp_directory_path() /
            ("zkpipe-test-" + std::to_string(std::random_device{}()) + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() { std::filesystem::remove_all(path_); }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A small scenario: 12 partitions of 2^20 constraints, every required cost given.
inline std::string small_scenario_text() {
  return R"(name = "small"
seed = 7

[hardware]
cores = 8
pcie_generation = 5
h2d_chunk_mib = 16

[workload]
partitions = 12
constraints_per_partition = 1048576
zero_scalar_share = 0.4
one_scalar_share = 0.4

[policy]
synthesis_threads = 4
partitions_in_flight = 4
staging = "pinned"
pool_slabs = 3
host_budget_gib = 4
workers_per_gpu = 2
)" + std::string(small_costs_toml);
}

}  // namespace zkpipe::model::testing
