// container_bytes.hpp — what the circom tests need to edit iden3 binary containers (.r1cs, .wtns,
// .zkey: magic, version, section count, then sections of u32 id, u64 length, payload) in place.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace zk::circom::test {

// Offset of section `id`'s payload in a well-formed container.
inline uint64_t payload_offset(const std::string& bytes, uint32_t id) {
  uint32_t count;
  std::memcpy(&count, bytes.data() + 8, 4);
  uint64_t at = 12;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t found;
    uint64_t length;
    std::memcpy(&found, bytes.data() + at, 4);
    std::memcpy(&length, bytes.data() + at + 4, 8);
    if (found == id) return at + 12;
    at += 12 + length;
  }
  throw std::logic_error("no section " + std::to_string(id) + " in the container");
}

}  // namespace zk::circom::test
