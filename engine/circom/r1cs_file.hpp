// r1cs_file.hpp — circom's constraint system (.r1cs version 1, formats/snarkjs.md 3.2): header
// (n8 = 32, prime r, wire counts, constraint count), constraints as three linear combinations of
// {u32 wire, canonical 32-byte coefficient}, and optionally the wire labels.
//
// R1csFile reads and checks the header on construction; check_witness() then streams the
// constraints (never holding them all) and checks <A,w> * <B,w> = <C,w> for every one, so a
// wrong witness is caught before a proof is made. Given the row values a zkey produced, it also
// checks that they equal <A,w> and <B,w>: the .zkey belongs to this circuit. Malformed or
// foreign files (another prime, PLONK custom gates, sizes that disagree) throw one zk::Error.
#pragma once
#include <filesystem>
#include <span>

#include "engine/circom/bin_file.hpp"

namespace zk::circom {

inline constexpr std::string_view r1cs_magic = "r1cs";
inline constexpr uint32_t r1cs_version = 1;

struct R1csHeader {
  uint32_t num_wires = 0;  // ONE + outputs + public inputs + private inputs + internal wires
  uint32_t num_outputs = 0, num_public_inputs = 0, num_private_inputs = 0;
  uint64_t num_labels = 0;
  uint32_t num_constraints = 0;
  uint32_t num_public() const { return num_outputs + num_public_inputs; }
};

class R1csFile {
 public:
  explicit R1csFile(BinFile file);
  static R1csFile open(const std::filesystem::path& path);

  const R1csHeader& header() const { return header_; }
  const std::string& name() const { return file_.name(); }

  // Throws zk::Error naming the first constraint the witness does not satisfy, or (when
  // zkey_a/zkey_b are not empty) whose A or B value differs from the zkey's row.
  void check_witness(std::span<const Fr> witness, std::span<const Fr> zkey_a = {},
                     std::span<const Fr> zkey_b = {});

 private:
  BinFile file_;
  R1csHeader header_;
};

}  // namespace zk::circom
