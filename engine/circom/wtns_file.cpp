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
  std::vector<uint8_t> too_large(count);
  parallel_for(count, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      too_large[i] = !z[i].is_reduced();
      if (!too_large[i]) z[i] = Fr::from_canonical(z[i].l);
    }
  }, 1 << 14);
  auto bad = std::find(too_large.begin(), too_large.end(), 1);
  if (bad != too_large.end())
    file.fail_at(first + (bad - too_large.begin()) * sizeof(Fr),
                 "expected witness value {} below the scalar field's modulus r, found a larger value",
                 bad - too_large.begin());
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
