// fuzz_input_file.hpp — for the fuzzers of readers that take a path: the input's bytes are
// written to one file of this process (in the temporary directory, named after the process id and
// the reader's usual file name), whose path the reader is then given.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

inline std::filesystem::path fuzz_input_file(const uint8_t* data, size_t size, const std::string& name) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("zkpipe-fuzz-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  return path;
}
