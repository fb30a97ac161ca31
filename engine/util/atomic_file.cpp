#include "engine/util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "engine/util/error.hpp"

namespace zk {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view partial_suffix = ".partial";

fs::path unique_partial_path(const fs::path& path) {
  static std::atomic<uint64_t> calls{0};
  return path.parent_path() / fmt::format(".{}.{}-{}{}", path.filename().string(), ::getpid(), calls++, partial_suffix);
}

std::string os_error() { return std::strerror(errno); }

// fsync through a descriptor of its own: fsync flushes the file (or folder), not the descriptor.
void sync_to_disk(const fs::path& file, int open_flags, const fs::path& target) {
  const int fd = ::open(file.c_str(), open_flags | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string error = os_error();
    if (fd >= 0) ::close(fd);
    fail("{}: cannot flush {} to disk ({}); check the disk and run again", target.string(), file.string(), error);
  }
  ::close(fd);
}

// Removes the temporary unless it was renamed into place.
struct PartialFile {
  fs::path path;
  bool renamed = false;
  ~PartialFile() {
    if (renamed) return;
    std::error_code ignored;
    fs::remove(path, ignored);
  }
};

}  // namespace

void write_file_atomically(const fs::path& path, const std::function<void(std::ostream&)>& writer) {
  PartialFile partial{unique_partial_path(path)};
  {
    std::ofstream out(partial.path, std::ios::binary | std::ios::trunc);
    if (!out)
      fail("{}: cannot create {} ({}); check the folder exists and is writable", path.string(),
           partial.path.string(), os_error());
    writer(out);
    out.flush();
    if (!out) fail("{}: writing failed ({}; disk full?): nothing was written; free space and run again", path.string(), os_error());
    out.close();
    if (!out) fail("{}: closing failed ({}; disk full?): nothing was written; free space and run again", path.string(), os_error());
  }
  sync_to_disk(partial.path, O_RDONLY, path);
  if (::rename(partial.path.c_str(), path.c_str()) != 0)
    fail("{}: cannot rename {} over it ({}); check the folder is writable and {} is not a folder", path.string(),
         partial.path.string(), os_error(), path.string());
  partial.renamed = true;
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  sync_to_disk(folder, O_RDONLY | O_DIRECTORY, path);
}

void write_text_atomically(const fs::path& path, std::string_view text) {
  write_file_atomically(path, [text](std::ostream& out) { out << text; });
}

bool is_partial_of(const fs::path& file, const fs::path& path) {
  const std::string name = file.filename().string();
  std::string prefix = ".";  // appended, not concatenated: GCC 12 warns falsely (-Wrestrict) on "." + s + "."
  prefix += path.filename().string();
  prefix += '.';
  if (file.parent_path() != path.parent_path() || !name.starts_with(prefix) || !name.ends_with(partial_suffix) ||
      name.size() <= prefix.size() + partial_suffix.size())
    return false;
  // What unique_partial_path() puts between them: <pid>-<n>.
  const std::string_view tag = std::string_view(name).substr(prefix.size(), name.size() - prefix.size() - partial_suffix.size());
  const size_t dash = tag.find('-');
  auto digits = [](std::string_view text) {
    return !text.empty() && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
  };
  return dash != std::string_view::npos && digits(tag.substr(0, dash)) && digits(tag.substr(dash + 1));
}

size_t remove_stale_partials(const fs::path& path) {
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code error;
  size_t removed = 0;
  for (const auto& entry : fs::directory_iterator(folder, error))
    if (is_partial_of(path.parent_path() / entry.path().filename(), path) && fs::remove(entry.path(), error)) ++removed;
  return removed;
}

}  // namespace zk
