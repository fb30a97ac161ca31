// bin_file.hpp — the binary container shared by circom's .r1cs and .wtns and snarkjs's .zkey:
// 4-byte magic, u32 version, u32 section count, then sections {u32 id, u64 byte length, payload}
// in any order, all little-endian (formats/snarkjs.md 3.1).
//
// BinFile indexes the sections by id without reading payloads; SectionReader streams one section
// with every read bounds-checked against the section's end, so no size field in a file can make
// a reader read past a section, allocate more than the file holds, or loop without progress.
// Every defect throws one zk::Error "<file>: at byte <offset>: expected <what>, found <what>".
// Opening checks the magic, the version, that every section lies inside the file, that no id
// repeats and that nothing trails the last section. Not thread-safe: one reader at a time.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <istream>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/util/error.hpp"
#include "kernels/ff/bls12-381.hpp"

namespace zk::circom {

using bls12_381::Fr;

class SectionReader;

class BinFile {
 public:
  // `magic` is the expected 4-character type ("r1cs", "wtns", "zkey"); `version` its version.
  static BinFile open(const std::filesystem::path& path, std::string_view magic, uint32_t version);
  // The same over bytes in memory (tests and fuzzing); `name` stands for the file in messages.
  static BinFile from_bytes(std::string name, std::string bytes, std::string_view magic,
                            uint32_t version);

  const std::string& name() const { return name_; }
  bool has_section(uint32_t id) const { return sections_.count(id) != 0; }
  // The payload of section `id`; fails naming `what` when the file has no such section.
  SectionReader section(uint32_t id, std::string_view what);

  template <class... Args>
  [[noreturn]] void fail_at(uint64_t offset, fmt::format_string<Args...> format, Args&&... args) const {
    zk::fail("{}: at byte {}: {}", name_, offset, fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  friend class SectionReader;
  struct Extent {
    uint64_t begin, size;
  };
  BinFile(std::string name, std::unique_ptr<std::istream> in, std::string_view magic, uint32_t version);
  void read_at(uint64_t offset, void* data, size_t bytes);

  std::string name_;
  std::unique_ptr<std::istream> in_;
  uint64_t size_bytes_ = 0;
  uint64_t stream_offset_ = 0;
  std::map<uint32_t, Extent> sections_;
};

class SectionReader {
 public:
  // Reads `bytes` bytes; fails naming `what` when they would pass the section's end.
  void read(void* data, size_t bytes, std::string_view what);
  template <class T>
  T value(std::string_view what) {
    T v;
    read(&v, sizeof v, what);
    return v;
  }
  // n8 then the prime: fails unless they are `bytes` and `modulus` (another curve's files).
  void expect_prime(uint32_t bytes, std::span<const uint64_t> modulus, std::string_view what);
  // Fails unless exactly `count` items of `item_bytes` remain (a section's size against its header).
  void expect_remaining(uint64_t count, uint64_t item_bytes, std::string_view what);
  void expect_end(std::string_view what);

  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return end_ - offset_; }
  void skip_to(uint64_t offset);  // within the section
  const BinFile& file() const { return *file_; }

 private:
  friend class BinFile;
  SectionReader(BinFile* file, uint64_t begin, uint64_t end) : file_(file), offset_(begin), begin_(begin), end_(end) {}
  BinFile* file_;
  uint64_t offset_, begin_, end_;
};

// The modulus of F as little-endian limbs.
template <class F>
std::array<uint64_t, F::N> modulus_limbs() {
  std::array<uint64_t, F::N> m;
  for (int i = 0; i < F::N; ++i) m[i] = F::params::modulus(i);
  return m;
}

}  // namespace zk::circom
