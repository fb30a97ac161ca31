#include "engine/circom/r1cs_file.hpp"

#include <cstring>
#include <vector>

namespace zk::circom {
namespace {
constexpr uint32_t header_section = 1, constraints_section = 2, labels_section = 3;
constexpr uint32_t custom_gates_sections[] = {4, 5};
constexpr uint64_t term_bytes = sizeof(uint32_t) + sizeof(Fr);

// <lc, w> for one linear combination read from `constraints`. The Montgomery product of a
// canonical coefficient and a Montgomery-form w is c*w in canonical form, so the terms are summed
// canonically and the sum enters Montgomery form once.
Fr evaluate_linear_combination(SectionReader& constraints, std::span<const Fr> witness,
                               std::vector<uint8_t>& buffer, uint32_t constraint, char matrix) {
  const BinFile& file = constraints.file();
  uint64_t at = constraints.offset();
  auto terms = constraints.value<uint32_t>("a linear combination's term count");
  if (terms > constraints.remaining() / term_bytes)
    file.fail_at(at, "expected constraint {}'s {} to hold at most {} terms (the rest of the section), found {}",
                 constraint, matrix, constraints.remaining() / term_bytes, terms);
  buffer.resize(terms * term_bytes);
  uint64_t first = constraints.offset();
  constraints.read(buffer.data(), buffer.size(), "the terms of a linear combination");
  Fr sum = Fr::zero();
  for (uint32_t t = 0; t < terms; ++t) {
    const uint8_t* term = buffer.data() + t * term_bytes;
    uint32_t wire;
    Fr coefficient;
    std::memcpy(&wire, term, sizeof wire);
    std::memcpy(coefficient.l, term + sizeof wire, sizeof(Fr));
    if (wire >= witness.size())
      file.fail_at(first + t * term_bytes, "expected a wire below {} in constraint {}'s {}, found wire {}",
                   witness.size(), constraint, matrix, wire);
    if (!coefficient.is_reduced())
      file.fail_at(first + t * term_bytes + sizeof wire,
                   "expected a coefficient below r in constraint {}'s {}, found a larger value", constraint, matrix);
    sum += coefficient * witness[wire];
  }
  return Fr::from_canonical(sum.l);
}
}  // namespace

R1csFile::R1csFile(BinFile file) : file_(std::move(file)) {
  auto header = file_.section(header_section, "the r1cs header");
  header.expect_prime(sizeof(Fr), modulus_limbs<Fr>(), "the scalar field prime r");
  uint64_t counts_at = header.offset();
  header_.num_wires = header.value<uint32_t>("the wire count");
  header_.num_outputs = header.value<uint32_t>("the public output count");
  header_.num_public_inputs = header.value<uint32_t>("the public input count");
  header_.num_private_inputs = header.value<uint32_t>("the private input count");
  header_.num_labels = header.value<uint64_t>("the label count");
  uint64_t constraint_count_at = header.offset();
  header_.num_constraints = header.value<uint32_t>("the constraint count");
  header.expect_end("the r1cs header");
  uint64_t inputs = uint64_t{1} + header_.num_outputs + header_.num_public_inputs + header_.num_private_inputs;
  if (inputs > header_.num_wires)
    file_.fail_at(counts_at, "expected at least {} wires (ONE, outputs and inputs), found {}", inputs,
                  header_.num_wires);
  for (uint32_t id : custom_gates_sections)
    if (file_.has_section(id))
      file_.fail_at(0, "expected a Groth16 constraint system, found custom gates (section {}): PLONK only", id);
  if (file_.has_section(labels_section))
    file_.section(labels_section, "the wire labels").expect_remaining(header_.num_wires, sizeof(uint64_t), "the wire labels");
  auto constraints = file_.section(constraints_section, "the constraints");
  uint64_t smallest_constraint = 3 * sizeof(uint32_t);
  if (header_.num_constraints > constraints.remaining() / smallest_constraint)
    file_.fail_at(constraint_count_at, "expected at most {} constraints (the constraint section's size), found {}",
                  constraints.remaining() / smallest_constraint, header_.num_constraints);
}

R1csFile R1csFile::open(const std::filesystem::path& path) {
  return R1csFile(BinFile::open(path, r1cs_magic, r1cs_version));
}

void R1csFile::check_witness(std::span<const Fr> witness, std::span<const Fr> zkey_a,
                             std::span<const Fr> zkey_b) {
  if (witness.size() != header_.num_wires)
    fail("{}: the witness has {} values but the circuit has {} wires: the witness is for another circuit",
         name(), witness.size(), header_.num_wires);
  bool compare_rows = !zkey_a.empty() || !zkey_b.empty();
  if (compare_rows && (zkey_a.size() < header_.num_constraints || zkey_b.size() < header_.num_constraints))
    fail("{}: {} constraints but the .zkey's domain has only {} rows: the .zkey is for another circuit",
         name(), header_.num_constraints, std::min(zkey_a.size(), zkey_b.size()));
  auto constraints = file_.section(constraints_section, "the constraints");
  std::vector<uint8_t> buffer;
  for (uint32_t i = 0; i < header_.num_constraints; ++i) {
    uint64_t at = constraints.offset();
    Fr a = evaluate_linear_combination(constraints, witness, buffer, i, 'A');
    Fr b = evaluate_linear_combination(constraints, witness, buffer, i, 'B');
    Fr c = evaluate_linear_combination(constraints, witness, buffer, i, 'C');
    if (a * b != c)
      file_.fail_at(at, "the witness does not satisfy constraint {} (A*B != C): the witness is wrong; "
                    "no proof is made", i);
    if (compare_rows && (a != zkey_a[i] || b != zkey_b[i]))
      file_.fail_at(at, "constraint {}'s {} differs from row {} of the .zkey: the .zkey was made for another circuit",
                    i, a != zkey_a[i] ? 'A' : 'B', i);
  }
  constraints.expect_end("the last constraint");
}

}  // namespace zk::circom
