#include "engine/circom/wtns_file.hpp"

#include <algorithm>

#include "kernels/util/parallel.hpp"

namespace zk::circom {
namespace {
constexpr uint32_t header_section = 1, values_section = 2;

// Checks the header (the prime, the count against the values section's size): the count, and the
// values section positioned at its first value.
struct Header {
  uint32_t count;
  SectionReader values;
};
Header read_header(BinFile& file) {
  auto header = file.section(header_section, "the witness header");
  header.expect_prime(sizeof(Fr), modulus_limbs<Fr>(), "the scalar field prime r");
  auto count = header.value<uint32_t>("the witness count");
  header.expect_end("the witness header");
  auto values = file.section(values_section, "the witness values");
  values.expect_remaining(count, sizeof(Fr), "the witness values");
  if (count == 0) file.fail_at(values.offset(), "expected at least the constant 1 as witness 0, found no values");
  return {count, values};
}

}  // namespace

std::vector<Fr> read_witness(BinFile file) {
  auto [count, values] = read_header(file);
  // Read raw in one piece (the section's size bounds it), then check and convert in parallel.
  std::vector<Fr> z(count);
  uint64_t first = values.offset();
  values.read(z.data(), count * sizeof(Fr), "the witness values");
  // Each value converted to Montgomery form, up to the first that is not below r (then nothing is returned).
  const size_t bad = parallel_find_first(count, [&](size_t i) {
    if (!z[i].is_reduced()) return true;
    z[i] = Fr::from_canonical(z[i].l);
    return false;
  }, 1 << 14);
  if (bad < count)
    file.fail_at(first + bad * sizeof(Fr),
                 "expected witness value {} below the scalar field's modulus r, found a larger value", bad);
  if (!z[0].is_one())
    file.fail_at(first, "expected witness 0 to be the constant 1, found another value: not a circom witness");
  return z;
}

std::vector<Fr> read_witness(const std::filesystem::path& path) {
  return read_witness(BinFile::open(path, wtns_magic, wtns_version));
}

uint32_t read_witness_count(const std::filesystem::path& path) {
  BinFile file = BinFile::open(path, wtns_magic, wtns_version);
  return read_header(file).count;
}

}  // namespace zk::circom
