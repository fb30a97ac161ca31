// wtns_file.hpp — circom's witness file (.wtns version 2, formats/snarkjs.md 3.3): section 1
// holds n8 = 32, the prime r and the witness count; section 2 the values, canonical 32-byte
// little-endian, below r. The reader rejects another curve's file, sizes that disagree with the
// header, values not below r and w[0] != 1 with one zk::Error (file, byte offset, expectation).
#pragma once
#include <filesystem>
#include <vector>

#include "engine/circom/bin_file.hpp"

namespace zk::circom {

inline constexpr std::string_view wtns_magic = "wtns";
inline constexpr uint32_t wtns_version = 2;

// The full assignment z (z[0] = 1, then outputs, public inputs, private inputs, internal wires),
// in Montgomery form.
std::vector<Fr> read_witness(BinFile file);
std::vector<Fr> read_witness(const std::filesystem::path& path);

// The number of values, from the header alone (the prime and the values section's size checked,
// the values not read): for checking many witness files against a key before proving any.
uint32_t read_witness_count(const std::filesystem::path& path);

}  // namespace zk::circom
