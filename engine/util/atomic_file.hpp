// atomic_file.hpp — every output file zkpipe writes (proofs, public inputs, keys, traces,
// calibrations, reports, sweep tables) goes through here, so that a reader never sees a partial
// file, even after a crash or SIGKILL mid-write.
//
// Promise: write_file_atomically(path, writer) lets `writer` fill a temporary file in path's own
// folder (".<name>.<pid>-<n>.partial"), flushes and fsyncs it,
// renames it over `path` and fsyncs the folder. Before the rename, `path` keeps whatever it held;
// after it, `path` holds the whole new content. If the writer throws or a write fails, the
// temporary is removed and nothing else changes. A process killed mid-write leaves only its
// temporary behind, never a partial `path`; remove_stale_partials(path) removes those leftovers.
// Failures throw zk::Error naming the file and saying what to do. Thread-safe (temporary names
// are unique per process and call).
#pragma once
#include <filesystem>
#include <functional>
#include <ostream>
#include <string_view>

namespace zk {

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer);
void write_text_atomically(const std::filesystem::path& path, std::string_view text);

// Whether `file` is a temporary that write_file_atomically() makes on the way to `path`.
bool is_partial_of(const std::filesystem::path& file, const std::filesystem::path& path);
// Removes the temporaries that killed writers of `path` left in its folder; returns how many.
// Call it only where no other process is writing `path`.
size_t remove_stale_partials(const std::filesystem::path& path);

}  // namespace zk
