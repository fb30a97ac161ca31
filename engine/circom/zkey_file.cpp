#include "engine/circom/zkey_file.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "kernels/util/parallel.hpp"

namespace zk::circom {
namespace {

using bls12_381::Fp;
using groth16::G1Affine;
using groth16::G2Affine;

enum Section : uint32_t {
  protocol_section = 1, header_section = 2, ic_section = 3, coefficients_section = 4, a_section = 5,
  b1_section = 6, b2_section = 7, c_section = 8, h_section = 9,
};
constexpr uint32_t groth16_protocol = 1;
constexpr uint32_t max_lg_domain = 28;

// {u32 matrix, u32 row, u32 signal, 32-byte value}
struct CoefficientRecord {
  uint32_t matrix, row, signal;
  Fr value;  // as stored: v*R^2 mod r, canonical limbs
};
constexpr uint64_t record_bytes = 3 * sizeof(uint32_t) + sizeof(Fr);

CoefficientRecord parse_record(const uint8_t* bytes) {
  CoefficientRecord r;
  std::memcpy(&r.matrix, bytes, 4);
  std::memcpy(&r.row, bytes + 4, 4);
  std::memcpy(&r.signal, bytes + 8, 4);
  std::memcpy(r.value.l, bytes + 12, sizeof(Fr));
  return r;
}

static_assert(sizeof(G1Affine) == 96 && sizeof(G2Affine) == 192, "zkey points load raw");


// Reads the section's next `count` points, its points first_index.., and checks each is reduced
// and on its curve.
template <class Point>
std::vector<Point> read_points(SectionReader& section, uint64_t count, std::string_view what, uint64_t first_index = 0) {
  uint64_t first = section.offset();
  std::vector<Point> points(count);
  section.read(points.data(), count * sizeof(Point), what);
  const size_t bad = parallel_find_first(count, [&](size_t i) { return !bls12_381::is_valid_encoding(points[i]); }, 4096);
  if (bad < count)
    section.file().fail_at(first + bad * sizeof(Point),
                           "expected point {} of {} to be reduced and on the curve, found a point that is not",
                           first_index + bad, what);
  return points;
}

template <class Point>
std::vector<Point> read_section_points(BinFile& file, uint32_t id, uint64_t count, std::string_view what) {
  auto section = file.section(id, what);
  return read_points<Point>(section, count, what);
}

template <class Point>
Point read_point(SectionReader& section, std::string_view what) {
  return read_points<Point>(section, 1, what)[0];
}

}  // namespace

ZkeyFile::ZkeyFile(BinFile file) : file_(std::move(file)) {
  auto protocol_reader = file_.section(protocol_section, "the protocol");
  auto protocol = protocol_reader.value<uint32_t>("the protocol id");
  if (protocol != groth16_protocol)
    file_.fail_at(protocol_reader.offset() - 4, "expected protocol 1 (Groth16), found {} ({})", protocol,
                  protocol == 2 ? "PLONK" : protocol == 10 ? "FFLONK" : "unknown");
  protocol_reader.expect_end("the protocol id");

  auto header = file_.section(header_section, "the Groth16 header");
  header.expect_prime(sizeof(Fp), modulus_limbs<Fp>(), "the base field prime q");
  header.expect_prime(sizeof(Fr), modulus_limbs<Fr>(), "the scalar field prime r");
  uint64_t counts_at = header.offset();
  header_.num_vars = header.value<uint32_t>("the variable count");
  header_.num_public = header.value<uint32_t>("the public input count");
  uint64_t domain_at = header.offset();
  auto domain_size = header.value<uint32_t>("the domain size");
  points_at_ = header.offset();
  header.expect_remaining(1, 3 * sizeof(G1Affine) + 3 * sizeof(G2Affine), "alpha1, beta1, beta2, gamma2, delta1, delta2");
  if (uint64_t{header_.num_public} + 1 > header_.num_vars)
    file_.fail_at(counts_at, "expected more variables than public inputs + 1, found {} variables and {} public inputs",
                  header_.num_vars, header_.num_public);
  if (domain_size < 2 || !std::has_single_bit(domain_size) || std::countr_zero(domain_size) > static_cast<int>(max_lg_domain))
    file_.fail_at(domain_at, "expected a domain size that is a power of two from 2 to 2^{}, found {}",
                  max_lg_domain, domain_size);
  header_.lg_domain = static_cast<uint32_t>(std::countr_zero(domain_size));

  uint64_t vars = header_.num_vars, publics = header_.num_public;
  file_.section(ic_section, "IC").expect_remaining(publics + 1, sizeof(G1Affine), "IC: nPublic+1 G1 points");
  file_.section(a_section, "A").expect_remaining(vars, sizeof(G1Affine), "A: nVars G1 points");
  file_.section(b1_section, "B1").expect_remaining(vars, sizeof(G1Affine), "B1: nVars G1 points");
  file_.section(b2_section, "B2").expect_remaining(vars, sizeof(G2Affine), "B2: nVars G2 points");
  file_.section(c_section, "C").expect_remaining(vars - publics - 1, sizeof(G1Affine), "C: nVars-nPublic-1 G1 points");
  file_.section(h_section, "H").expect_remaining(domain_size, sizeof(G1Affine), "H: domainSize G1 points");

  auto coefficients = file_.section(coefficients_section, "the coefficients");
  header_.num_coefficients = coefficients.value<uint32_t>("the coefficient count");
  coefficients.expect_remaining(header_.num_coefficients, record_bytes, "the coefficient records");
  if (header_.num_coefficients == 0)
    file_.fail_at(coefficients.offset(), "expected at least the public-input rows' coefficients, found none");
  // The last record is the A entry of the last public-input row: row constraints + nPublic.
  uint64_t last_at = coefficients.offset() + (header_.num_coefficients - 1) * record_bytes;
  coefficients.skip_to(last_at);
  uint8_t bytes[record_bytes];
  coefficients.read(bytes, record_bytes, "the last coefficient record");
  CoefficientRecord last = parse_record(bytes);
  if (last.matrix != 0 || last.signal != header_.num_public || last.row < header_.num_public ||
      last.row >= domain_size)
    file_.fail_at(last_at, "expected the last coefficient to be A for signal {} at row constraints + {} below the "
                  "domain size {}, found matrix {} row {} signal {}: not a key written by snarkjs",
                  header_.num_public, header_.num_public, domain_size, last.matrix, last.row, last.signal);
  header_.num_constraints = last.row - header_.num_public;
}

ZkeyFile ZkeyFile::open(const std::filesystem::path& path) {
  return ZkeyFile(BinFile::open(path, zkey_magic, zkey_version));
}

groth16::ProvingKey ZkeyFile::proving_key() {
  groth16::ProvingKey pk;
  pk.circuit = {"circom", header_.num_constraints};
  pk.num_constraints = header_.num_constraints;
  pk.num_public = header_.num_public;
  pk.num_vars = header_.num_vars;
  pk.lg_domain = header_.lg_domain;
  auto header = file_.section(header_section, "the Groth16 header");
  header.skip_to(points_at_);
  pk.alpha1 = read_point<G1Affine>(header, "alpha1");
  pk.beta1 = read_point<G1Affine>(header, "beta1");
  pk.beta2 = read_point<G2Affine>(header, "beta2");
  pk.gamma2 = read_point<G2Affine>(header, "gamma2");
  pk.delta1 = read_point<G1Affine>(header, "delta1");
  pk.delta2 = read_point<G2Affine>(header, "delta2");
  uint64_t vars = header_.num_vars, publics = header_.num_public;
  pk.ic = read_section_points<G1Affine>(file_, ic_section, publics + 1, "IC");
  pk.a = read_section_points<G1Affine>(file_, a_section, vars, "A");
  pk.b1 = read_section_points<G1Affine>(file_, b1_section, vars, "B1");
  pk.b2 = read_section_points<G2Affine>(file_, b2_section, vars, "B2");
  pk.l = read_section_points<G1Affine>(file_, c_section, vars - publics - 1, "C");
  pk.h = read_section_points<G1Affine>(file_, h_section, header_.domain_size(), "H");
  pk.index_b_query();
  return pk;
}

std::vector<uint32_t> ZkeyFile::b_absent() {
  constexpr uint64_t chunk_points = 1 << 16;
  auto b1 = file_.section(b1_section, "B1"), b2 = file_.section(b2_section, "B2");
  std::vector<uint32_t> absent;
  for (uint64_t first = 0; first < header_.num_vars; first += chunk_points) {
    const uint64_t count = std::min<uint64_t>(chunk_points, header_.num_vars - first);
    const auto b1_points = read_points<G1Affine>(b1, count, "B1", first);
    const auto b2_points = read_points<G2Affine>(b2, count, "B2", first);
    const auto found = groth16::absent_from_b(b1_points, b2_points, static_cast<uint32_t>(first));
    absent.insert(absent.end(), found.begin(), found.end());
  }
  return absent;
}

void ZkeyFile::evaluate_rows(std::span<const Fr> witness, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c) {
  const uint64_t n = header_.domain_size();
  if (witness.size() != header_.num_vars)
    fail("{}: the witness has {} values but the key has {} variables: the witness is for another circuit",
         name(), witness.size(), header_.num_vars);
  if (a.size() != n || b.size() != n || c.size() != n)
    throw std::invalid_argument("ZkeyFile::evaluate_rows: a, b, c must each hold the domain size");
  std::fill(a.begin(), a.end(), Fr::zero());
  std::fill(b.begin(), b.end(), Fr::zero());
  // Stored v*R^2 times Montgomery w*R under the Montgomery product is v*w*R^2: row sums carry an
  // extra factor R, removed once per row below.
  auto coefficients = file_.section(coefficients_section, "the coefficients");
  coefficients.skip_to(coefficients.offset() + sizeof(uint32_t));
  constexpr uint64_t chunk_records = 1 << 14;
  std::vector<uint8_t> chunk(chunk_records * record_bytes);
  for (uint64_t done = 0; done < header_.num_coefficients;) {
    uint64_t count = std::min(chunk_records, header_.num_coefficients - done);
    uint64_t first = coefficients.offset();
    coefficients.read(chunk.data(), count * record_bytes, "coefficient records");
    for (uint64_t k = 0; k < count; ++k) {
      CoefficientRecord r = parse_record(chunk.data() + k * record_bytes);
      uint64_t at = first + k * record_bytes;
      if (r.matrix > 1) file_.fail_at(at, "expected matrix 0 (A) or 1 (B), found {}", r.matrix);
      if (r.row >= n) file_.fail_at(at + 4, "expected a row below the domain size {}, found {}", n, r.row);
      if (r.signal >= header_.num_vars)
        file_.fail_at(at + 8, "expected a signal below {} variables, found {}", header_.num_vars, r.signal);
      if (!r.value.is_reduced()) file_.fail_at(at + 12, "expected a coefficient below r, found a larger value");
      (r.matrix == 0 ? a : b)[r.row] += r.value * witness[r.signal];
    }
    done += count;
  }
  Fr unit = Fr::zero();
  unit.l[0] = 1;  // the Montgomery product with raw 1 divides by R
  parallel_for(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      a[i] = a[i] * unit;
      b[i] = b[i] * unit;
      c[i] = a[i] * b[i];
    }
  }, 4096);
}

}  // namespace zk::circom
