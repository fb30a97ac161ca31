#include "engine/circom/wtns_file.hpp"

namespace zk::circom {
namespace {
constexpr uint32_t header_section = 1, values_section = 2;
}  // namespace

std::vector<Fr> read_witness(BinFile file) {
  auto header = file.section(header_section, "the witness header");
  header.expect_prime(sizeof(Fr), modulus_limbs<Fr>(), "the scalar field prime r");
  auto count = header.value<uint32_t>("the witness count");
  header.expect_end("the witness header");
  auto values = file.section(values_section, "the witness values");
  values.expect_remaining(count, sizeof(Fr), "the witness values");
  if (count == 0) file.fail_at(values.offset(), "expected at least the constant 1 as witness 0, found no values");
  std::vector<Fr> z(count);
  uint64_t first = values.offset();
  for (auto& w : z) w = values.canonical_fr("a witness value");
  if (!z[0].is_one())
    file.fail_at(first, "expected witness 0 to be the constant 1, found another value: not a circom witness");
  return z;
}

std::vector<Fr> read_witness(const std::filesystem::path& path) {
  return read_witness(BinFile::open(path, wtns_magic, wtns_version));
}

}  // namespace zk::circom
