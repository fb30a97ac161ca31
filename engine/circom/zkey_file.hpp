// zkey_file.hpp — snarkjs's Groth16 proving key (.zkey version 1, formats/snarkjs.md 3.4) for
// BLS12-381, and the first step of snarkjs's prover that it serves: the row values a, b, c.
//
// ZkeyFile checks on construction the protocol (Groth16), both primes (BLS12-381), the counts
// (a power-of-two domain strictly above constraints + public inputs, nVars > nPublic) and the
// size of every section against them, and derives the constraint count from the coefficient
// section (snarkjs writes the public-input rows, A = 1*w_s at row constraints + s, last).
// proving_key() reads the points (Fq in Montgomery form with R = 2^384, exactly our Fp, so they
// load raw) and checks each is reduced and on its curve; b_absent() lists the variables absent
// from B without holding the points. evaluate_rows() streams the coefficient records
// {matrix, row, signal, v*R^2 mod r}: a_c = sum v*w_s over A, b_c over B, c_c = a_c*b_c,
// as snarkjs does (the C matrix is not in the file: with the .r1cs, R1csFile::check_witness
// checks it). Every defect throws one zk::Error naming file, byte offset and expectation.
#pragma once
#include <filesystem>
#include <span>

#include "engine/circom/bin_file.hpp"
#include "engine/groth16/keys.hpp"

namespace zk::circom {

inline constexpr std::string_view zkey_magic = "zkey";
inline constexpr uint32_t zkey_version = 1;

struct ZkeyHeader {
  uint32_t num_vars = 0;    // ONE + public + private
  uint32_t num_public = 0;  // outputs + public inputs
  uint32_t lg_domain = 0;
  uint64_t num_coefficients = 0;
  uint64_t num_constraints = 0;
  uint64_t domain_size() const { return uint64_t{1} << lg_domain; }
};

class ZkeyFile {
 public:
  explicit ZkeyFile(BinFile file);
  static ZkeyFile open(const std::filesystem::path& path);

  const ZkeyHeader& header() const { return header_; }
  const std::string& name() const { return file_.name(); }

  groth16::ProvingKey proving_key();
  // The key's ProvingKey::b_absent, read from the B1 and B2 sections a chunk at a time.
  std::vector<uint32_t> b_absent();
  // witness: num_vars values (Montgomery form); a, b, c: domain_size() each, overwritten.
  void evaluate_rows(std::span<const Fr> witness, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c);

 private:
  BinFile file_;
  ZkeyHeader header_;
  uint64_t points_at_ = 0;  // alpha1's offset in the header section
};

}  // namespace zk::circom
