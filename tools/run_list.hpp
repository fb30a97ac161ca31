// run_list.hpp — `zkpipe prove --runs FILE`: the settings of several measured runs of one job on one
// loaded key. FILE is CSV with the header `run,synthesis_threads,pool_slabs` (blank lines and lines
// starting with # are skipped), a row a run, proved in file order: its name (a folder name under
// --trace-dir, unique) and the synthesis threads and pinned slabs per pool it runs with (0: the
// engine's default, as the options' own 0). A file that cannot be read, a missing column, a value
// that is not a whole number or a name that cannot be a folder, or repeats one, is an error naming
// the file and line.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace zkpipe::tools {

struct ListedRun {
  std::string name;
  std::uint32_t synthesis_threads = 0;
  std::uint32_t pool_slabs = 0;
};

std::vector<ListedRun> read_run_list(const std::filesystem::path& path);

}  // namespace zkpipe::tools
