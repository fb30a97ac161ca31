#include "engine/circom/bin_file.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

namespace zk::circom {

static_assert(std::endian::native == std::endian::little, "the readers copy little-endian integers as they are");

namespace {
constexpr uint64_t container_header_bytes = 12;  // magic, version, section count
constexpr uint64_t section_header_bytes = 12;    // id, byte length

std::string printable(std::string_view bytes) {
  std::string out;
  for (unsigned char ch : bytes) out += (ch >= 0x20 && ch < 0x7f) ? std::string(1, static_cast<char>(ch)) : fmt::format("\\x{:02x}", ch);
  return out;
}
}  // namespace

BinFile BinFile::open(const std::filesystem::path& path, std::string_view magic, uint32_t version) {
  if (std::filesystem::is_directory(path)) fail("{}: is a folder; a .{} file was expected", path.string(), magic);
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) fail("{}: cannot open the file (a .{} file was expected)", path.string(), magic);
  return BinFile(path.string(), std::move(in), magic, version);
}

BinFile BinFile::from_bytes(std::string name, std::string bytes, std::string_view magic, uint32_t version) {
  return BinFile(std::move(name), std::make_unique<std::istringstream>(std::move(bytes)), magic, version);
}

BinFile::BinFile(std::string name, std::unique_ptr<std::istream> in, std::string_view magic, uint32_t version)
    : name_(std::move(name)), in_(std::move(in)) {
  in_->seekg(0, std::ios::end);
  auto end = in_->tellg();
  if (!*in_ || end < 0) fail("{}: cannot determine the file size (not a regular file?)", name_);
  size_bytes_ = static_cast<uint64_t>(end);
  in_->seekg(0);
  if (size_bytes_ < container_header_bytes)
    fail_at(0, "expected a .{} file (magic, version, section count: {} bytes), found only {} bytes",
            magic, container_header_bytes, size_bytes_);
  char found_magic[4];
  read_at(0, found_magic, 4);
  if (std::string_view(found_magic, 4) != magic)
    fail_at(0, "expected the magic '{}', found '{}': not a .{} file", magic,
            printable(std::string_view(found_magic, 4)), magic);
  uint32_t found_version, count;
  read_at(4, &found_version, 4);
  if (found_version != version)
    fail_at(4, "expected .{} version {}, found version {}", magic, version, found_version);
  read_at(8, &count, 4);
  uint64_t at = container_header_bytes;
  for (uint32_t i = 0; i < count; ++i) {
    if (size_bytes_ - at < section_header_bytes)
      fail_at(at, "expected the header of section {} of {} (12 bytes), found the end of the file", i + 1, count);
    uint32_t id;
    uint64_t bytes;
    read_at(at, &id, 4);
    read_at(at + 4, &bytes, 8);
    uint64_t begin = at + section_header_bytes;
    if (bytes > size_bytes_ - begin)
      fail_at(at + 4, "expected section {} to fit in the file ({} bytes left), found a length of {} bytes",
              id, size_bytes_ - begin, bytes);
    if (!sections_.emplace(id, Extent{begin, bytes}).second)
      fail_at(at, "expected each section id once, found section {} again", id);
    at = begin + bytes;
  }
  if (at != size_bytes_)
    fail_at(at, "expected the end of the file after {} sections, found {} more bytes", count, size_bytes_ - at);
}

void BinFile::read_at(uint64_t offset, void* data, size_t bytes) {
  if (offset != stream_offset_) {
    in_->clear();
    in_->seekg(static_cast<std::streamoff>(offset));
  }
  in_->read(static_cast<char*>(data), static_cast<std::streamsize>(bytes));
  if (!*in_ || static_cast<size_t>(in_->gcount()) != bytes) {
    stream_offset_ = ~uint64_t{0};
    fail_at(offset, "read error ({} bytes): the file changed or the device failed", bytes);
  }
  stream_offset_ = offset + bytes;
}

SectionReader BinFile::section(uint32_t id, std::string_view what) {
  auto it = sections_.find(id);
  if (it == sections_.end())
    fail("{}: expected section {} ({}), found no such section", name_, id, what);
  return SectionReader(this, it->second.begin, it->second.begin + it->second.size);
}

void SectionReader::read(void* data, size_t bytes, std::string_view what) {
  if (bytes > end_ - offset_)
    file_->fail_at(offset_, "expected {} ({} bytes), found the end of its section after {} bytes", what,
                   bytes, end_ - offset_);
  file_->read_at(offset_, data, bytes);
  offset_ += bytes;
}

void SectionReader::expect_prime(uint32_t bytes, std::span<const uint64_t> modulus, std::string_view what) {
  uint64_t at = offset_;
  auto found_bytes = value<uint32_t>("the field size in bytes");
  if (found_bytes != bytes)
    file_->fail_at(at, "expected {} of {} bytes (BLS12-381), found {} bytes: a file of another curve", what,
                   bytes, found_bytes);
  std::array<uint64_t, 6> found{};
  read(found.data(), bytes, what);
  if (std::memcmp(found.data(), modulus.data(), bytes) != 0)
    file_->fail_at(at + 4, "expected {} of BLS12-381, found another prime: compile with --prime bls12381 "
                   "and use a bls12381 powers of tau", what);
}

void SectionReader::expect_remaining(uint64_t count, uint64_t item_bytes, std::string_view what) {
  if (count > remaining() / item_bytes || count * item_bytes != remaining())
    file_->fail_at(offset_, "expected {} ({} x {} bytes) to fill the rest of the section, found {} bytes",
                   what, count, item_bytes, remaining());
}

void SectionReader::expect_end(std::string_view what) {
  if (offset_ != end_)
    file_->fail_at(offset_, "expected the end of the section after {}, found {} more bytes", what, end_ - offset_);
}

void SectionReader::skip_to(uint64_t offset) {
  if (offset < begin_ || offset > end_)
    file_->fail_at(offset_, "expected a position inside the section [{}, {}], found {}", begin_, end_, offset);
  offset_ = offset;
}

}  // namespace zk::circom
