// text_file.hpp — a whole input file (trace, scenario, calibration, report) read into a string.
#pragma once
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace zk {

// The text of the file at `path`; std::nullopt where it cannot be opened, or is a folder or a
// device (which may never end). A pipe is read to its end.
inline std::optional<std::string> read_text_file(const std::filesystem::path& path) {
  std::error_code error;
  const auto type = std::filesystem::status(path, error).type();
  using std::filesystem::file_type;
  if (type == file_type::directory || type == file_type::character || type == file_type::block) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

}  // namespace zk
