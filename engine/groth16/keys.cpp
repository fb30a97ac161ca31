#include "engine/groth16/keys.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "engine/util/atomic_file.hpp"
#include "engine/util/error.hpp"
#include "kernels/util/parallel.hpp"
#include "policy/device_memory.hpp"

namespace zk::groth16 {
namespace {

constexpr char magic[8] = {'Z', 'K', 'P', 'I', 'P', 'E', 'P', 'K'};
constexpr uint32_t format_version = 2;  // 2: the constraint matrices follow the points
constexpr uint32_t max_name_bytes = 64;
constexpr uint32_t max_lg_domain = 28;

// Writes into the temporary file of write_file_atomically().
class Writer {
 public:
  Writer(const std::filesystem::path& path, std::ostream& out) : path_(path), out_(out) {}
  void bytes(const void* data, size_t n) {
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    if (!out_) fail("{}: write failed (disk full?): nothing was written; free space and run again", path_.string());
  }
  template <class T>
  void value(const T& v) { bytes(&v, sizeof v); }
  template <class T>
  void array(const std::vector<T>& v) {
    value<uint64_t>(v.size());
    bytes(v.data(), v.size() * sizeof(T));
  }

 private:
  std::filesystem::path path_;
  std::ostream& out_;
};

class Reader {
 public:
  explicit Reader(const std::filesystem::path& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) fail("{}: cannot open the proving key; run `zkpipe setup` to make one", path.string());
    std::error_code ec;
    size_ = std::filesystem::file_size(path, ec);
    if (ec) fail("{}: cannot read the file size: {}", path.string(), ec.message());
  }
  void bytes(void* data, size_t n, const char* what) {
    if (n > size_ - offset_)
      fail("{}: truncated at byte {}: expected {} more bytes of {}; the file is incomplete, "
           "make the key again", path_.string(), offset_, n, what);
    in_.read(static_cast<char*>(data), static_cast<std::streamsize>(n));
    if (!in_) fail("{}: read error at byte {}", path_.string(), offset_);
    offset_ += n;
  }
  template <class T>
  T value(const char* what) {
    T v;
    bytes(&v, sizeof v, what);
    return v;
  }
  template <class T>
  std::vector<T> array(uint64_t expected_count, const char* what) {
    uint64_t at = offset_;
    auto count = value<uint64_t>(what);
    if (count != expected_count)
      fail("{}: at byte {}: {} has {} entries, the header implies {}; the file is corrupt",
           path_.string(), at, what, count, expected_count);
    if (count > (size_ - offset_) / sizeof(T))  // before allocating: a count may claim any size
      fail("{}: truncated at byte {}: {} has {} entries of {} bytes, the file has {} bytes left; "
           "the file is incomplete, make the key again", path_.string(), offset_, what, count, sizeof(T),
           size_ - offset_);
    std::vector<T> v(count);
    bytes(v.data(), count * sizeof(T), what);
    return v;
  }
  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  uint64_t size_ = 0, offset_ = 0;
};

// Reports the first entry i < count for which bad(i) holds ("entry i of <what> <problem>"), in an
// array of `entry_bytes` per entry that ends at byte `array_end`.
template <class IsBad>
void check_entries(const Reader& r, size_t count, size_t entry_bytes, uint64_t array_end, IsBad&& bad,
                   const char* what, const char* problem) {
  if (const size_t i = parallel_find_first(count, bad, 4096); i < count)
    fail("{}: at byte {}: entry {} of {} {}; the file is corrupt", r.path().string(),
         array_end - (count - i) * entry_bytes, i, what, problem);
}

// Every point must be reduced and on the curve.
template <class Point>
void check_points(const Reader& r, const std::vector<Point>& points, uint64_t array_end, const char* what) {
  check_entries(r, points.size(), sizeof(Point), array_end,
                [&](size_t i) { return !bls12_381::is_valid_encoding(points[i]); }, what, "is not on the curve");
}

void write_matrix(Writer& w, const r1cs::SparseRows& m) {
  w.array(m.row_start), w.array(m.column), w.array(m.coeff);
}

r1cs::SparseRows read_matrix(Reader& r, const ProvingKey& pk, const std::string& name) {
  r1cs::SparseRows m;
  const std::string rows = name + " row starts", columns = name + " columns", coeffs = name + " coefficients";
  m.row_start = r.array<uint64_t>(pk.num_constraints + 1, rows.c_str());
  check_entries(r, m.row_start.size(), sizeof(uint64_t), r.offset(),
                [&](size_t i) { return i == 0 ? m.row_start[0] != 0 : m.row_start[i] < m.row_start[i - 1]; },
                rows.c_str(), "breaks the order (0 first, then never decreasing)");
  m.column = r.array<uint32_t>(m.row_start.back(), columns.c_str());
  check_entries(r, m.column.size(), sizeof(uint32_t), r.offset(), [&](size_t i) { return m.column[i] >= pk.num_vars; },
                columns.c_str(), "names a variable beyond the key's variable count");
  m.coeff = r.array<r1cs::Fr>(m.row_start.back(), coeffs.c_str());
  check_entries(r, m.coeff.size(), sizeof(r1cs::Fr), r.offset(), [&](size_t i) { return !m.coeff[i].is_reduced(); },
                coeffs.c_str(), "is not a field element (not below r)");
  return m;
}

void write_key(const ProvingKey& pk, Writer& w) {
  w.bytes(magic, sizeof magic);
  w.value(format_version);
  w.value<uint32_t>(static_cast<uint32_t>(pk.circuit.name.size()));
  w.bytes(pk.circuit.name.data(), pk.circuit.name.size());
  w.value<uint64_t>(pk.circuit.target_constraints);
  w.value<uint64_t>(pk.num_constraints);
  w.value(pk.num_public);
  w.value(pk.num_vars);
  w.value(pk.lg_domain);
  w.value(pk.alpha1), w.value(pk.beta1), w.value(pk.delta1);
  w.value(pk.beta2), w.value(pk.gamma2), w.value(pk.delta2);
  w.array(pk.ic), w.array(pk.a), w.array(pk.b1), w.array(pk.l), w.array(pk.h), w.array(pk.b2);
  write_matrix(w, pk.constraints.a), write_matrix(w, pk.constraints.b), write_matrix(w, pk.constraints.c);
}

}  // namespace

static_assert(sizeof(G1Affine) == zkpipe::policy::g1_point_bytes && sizeof(G2Affine) == zkpipe::policy::g2_point_bytes,
              "the model streams the key's points at the policy's point sizes");

uint64_t ProvingKey::msm_point_bytes() const {
  return (a.size() + b1.size() + l.size() + h.size()) * sizeof(G1Affine) + b2.size() * sizeof(G2Affine);
}

std::vector<uint32_t> absent_from_b(std::span<const G1Affine> b1, std::span<const G2Affine> b2, uint32_t first) {
  const size_t n = std::min(b1.size(), b2.size());
  const size_t blocks = parallel_blocks(n, 65536);
  std::vector<std::vector<uint32_t>> found(blocks);
  parallel_for(blocks, [&](size_t begin, size_t end) {
    for (size_t block = begin; block < end; ++block)
      for (size_t i = n * block / blocks; i < n * (block + 1) / blocks; ++i)
        if (b1[i].is_infinity() && b2[i].is_infinity()) found[block].push_back(first + static_cast<uint32_t>(i));
  });
  std::vector<uint32_t> absent;
  for (const auto& indices : found) absent.insert(absent.end(), indices.begin(), indices.end());
  return absent;
}

void ProvingKey::index_b_query() { b_absent = absent_from_b(b1, b2); }

bool ProvingKey::splits_b_query() const { return groth16::splits_b_query(b_absent.size(), num_vars); }

uint64_t ProvingKey::bytes() const { return ic.size() * sizeof(G1Affine) + msm_point_bytes() + constraints.bytes(); }

void write_proving_key(const ProvingKey& pk, const std::filesystem::path& path) {
  if (pk.constraints.rows() != pk.num_constraints)
    throw std::invalid_argument("write_proving_key: the key carries no constraint matrices (a circom key?)");
  write_file_atomically(path, [&](std::ostream& out) {
    Writer w(path, out);
    write_key(pk, w);
  });
}

namespace {

// The header after the magic and version: the circuit, the counts and the domain, each bound
// checked before the sums that use it, and the file's size against what they imply.
void read_header(Reader& r, const std::filesystem::path& path, ProvingKey& pk) {
  auto name_bytes = r.value<uint32_t>("the circuit name length");
  if (name_bytes > max_name_bytes)
    fail("{}: at byte 12: circuit name of {} bytes (at most {}); the file is corrupt", path.string(),
         name_bytes, max_name_bytes);
  pk.circuit.name.resize(name_bytes);
  r.bytes(pk.circuit.name.data(), name_bytes, "the circuit name");
  pk.circuit.target_constraints = r.value<uint64_t>("the target constraints");
  pk.num_constraints = r.value<uint64_t>("the constraint count");
  pk.num_public = r.value<uint32_t>("the public input count");
  pk.num_vars = r.value<uint32_t>("the variable count");
  pk.lg_domain = r.value<uint32_t>("the domain size");
  if (pk.lg_domain > max_lg_domain || pk.num_vars < uint64_t{pk.num_public} + 1 ||
      pk.num_constraints >= (uint64_t{1} << pk.lg_domain) ||
      pk.num_constraints + pk.num_public >= (uint64_t{1} << pk.lg_domain))
    fail("{}: inconsistent header (domain 2^{}, {} constraints, {} public, {} variables); "
         "the file is corrupt", path.string(), pk.lg_domain, pk.num_constraints, pk.num_public,
         pk.num_vars);
  uint64_t g1_points = (pk.num_public + 1) + 2ull * pk.num_vars + (pk.num_vars - pk.num_public - 1) +
                       (uint64_t{1} << pk.lg_domain) + 3;
  // The points and the matrices' row starts; the matrices' entries follow.
  uint64_t least_size = r.offset() + g1_points * sizeof(G1Affine) + (pk.num_vars + 3ull) * sizeof(G2Affine) +
                        6 * sizeof(uint64_t) + 3 * (pk.num_constraints + 4) * sizeof(uint64_t);
  if (r.size() < least_size)
    fail("{}: the file has {} bytes, its header implies at least {}; the file is truncated or corrupt",
         path.string(), r.size(), least_size);
}

// `count` points, each checked to lie on its curve.
template <class Point>
std::vector<Point> read_points(Reader& r, uint64_t count, const char* what) {
  std::vector<Point> points = r.array<Point>(count, what);
  check_points(r, points, r.offset(), what);
  return points;
}

// The six fixed points, then the MSMs' point arrays.
void read_key_points(Reader& r, ProvingKey& pk) {
  pk.alpha1 = r.value<G1Affine>("alpha1");
  pk.beta1 = r.value<G1Affine>("beta1");
  pk.delta1 = r.value<G1Affine>("delta1");
  pk.beta2 = r.value<G2Affine>("beta2");
  pk.gamma2 = r.value<G2Affine>("gamma2");
  pk.delta2 = r.value<G2Affine>("delta2");
  std::vector<G1Affine> fixed_g1{pk.alpha1, pk.beta1, pk.delta1};
  std::vector<G2Affine> fixed_g2{pk.beta2, pk.gamma2, pk.delta2};
  check_points(r, fixed_g1, r.offset() - 3 * sizeof(G2Affine), "alpha1/beta1/delta1");
  check_points(r, fixed_g2, r.offset(), "beta2/gamma2/delta2");
  pk.ic = read_points<G1Affine>(r, pk.num_public + 1, "ic");
  pk.a = read_points<G1Affine>(r, pk.num_vars, "a");
  pk.b1 = read_points<G1Affine>(r, pk.num_vars, "b1");
  pk.l = read_points<G1Affine>(r, pk.num_vars - pk.num_public - 1, "l");
  pk.h = read_points<G1Affine>(r, uint64_t{1} << pk.lg_domain, "h");
  pk.b2 = read_points<G2Affine>(r, pk.num_vars, "b2");
  pk.index_b_query();
}

}  // namespace

ProvingKey read_proving_key(const std::filesystem::path& path) {
  Reader r(path);
  char m[8];
  r.bytes(m, sizeof m, "the magic");
  if (std::memcmp(m, magic, sizeof m) != 0)
    fail("{}: not a zkpipe proving key (bad magic at byte 0); give the file `zkpipe setup` wrote",
         path.string());
  auto version = r.value<uint32_t>("the version");
  if (version != format_version)
    fail("{}: proving key format version {} is not supported (expected {}); make the key again",
         path.string(), version, format_version);
  ProvingKey pk;
  read_header(r, path, pk);
  read_key_points(r, pk);
  pk.constraints.a = read_matrix(r, pk, "matrix A");
  pk.constraints.b = read_matrix(r, pk, "matrix B");
  pk.constraints.c = read_matrix(r, pk, "matrix C");
  if (r.offset() != r.size())
    fail("{}: {} bytes follow the key's last matrix at byte {}; the file is corrupt", path.string(),
         r.size() - r.offset(), r.offset());
  return pk;
}

}  // namespace zk::groth16
