// Tests of the circom/snarkjs readers and the circom job on tiny.circom's real files (made by
// circom2 and snarkjs, in fixtures/), and on mutations of them and of synthetic containers: every
// defect must be one zk::Error naming the file, the byte offset and what was expected.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "engine/circom/circom_job.hpp"
#include "engine/circom/r1cs_file.hpp"
#include "engine/circom/wtns_file.hpp"
#include "engine/circom/zkey_file.hpp"
#include "engine/groth16/cpu_backend.hpp"
#include "engine/groth16/prover.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/util/decimal.hpp"
#include "engine/util/rng.hpp"
#include "tests/circom/container_bytes.hpp"

namespace zk::circom {
namespace {

namespace fs = std::filesystem;
const fs::path fixtures = ZKPIPE_CIRCOM_FIXTURES;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

using test::payload_offset;

template <class T>
void put(std::string& bytes, uint64_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

std::string container(std::string_view magic, uint32_t version, const std::vector<std::pair<uint32_t, std::string>>& sections) {
  std::string out(magic);
  out.append(reinterpret_cast<const char*>(&version), 4);
  auto count = static_cast<uint32_t>(sections.size());
  out.append(reinterpret_cast<const char*>(&count), 4);
  for (const auto& [id, payload] : sections) {
    uint64_t length = payload.size();
    out.append(reinterpret_cast<const char*>(&id), 4);
    out.append(reinterpret_cast<const char*>(&length), 8);
    out += payload;
  }
  return out;
}

// Runs `read` and expects a zk::Error whose message contains every one of `parts`.
template <class Fn>
void expect_error(Fn&& read, std::initializer_list<std::string_view> parts) {
  try {
    read();
    ADD_FAILURE() << "expected a zk::Error";
  } catch (const Error& e) {
    std::string message = e.what();
    for (auto part : parts) EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
  }
}

std::vector<Fr> witness_of(const std::string& bytes) {
  return read_witness(BinFile::from_bytes("test.wtns", bytes, wtns_magic, wtns_version));
}
ZkeyFile zkey_of(const std::string& bytes) { return ZkeyFile(BinFile::from_bytes("test.zkey", bytes, zkey_magic, zkey_version)); }
R1csFile r1cs_of(const std::string& bytes) { return R1csFile(BinFile::from_bytes("test.r1cs", bytes, r1cs_magic, r1cs_version)); }

std::string decimal(const Fr& x) { return to_decimal(x); }

TEST(CircomFiles, TinyCircuitReadsAsCircomWroteIt) {
  auto z = read_witness(fixtures / "tiny.wtns");
  ASSERT_EQ(z.size(), 5u);  // ONE, c (output), b (public input), a, d
  EXPECT_EQ(decimal(z[0]), "1");
  EXPECT_EQ(decimal(z[1]), "33");
  EXPECT_EQ(decimal(z[2]), "11");
  EXPECT_EQ(decimal(z[3]), "3");
  EXPECT_EQ(decimal(z[4]), "1092");
  auto r1cs = R1csFile::open(fixtures / "tiny.r1cs");
  EXPECT_EQ(r1cs.header().num_wires, 5u);
  EXPECT_EQ(r1cs.header().num_constraints, 2u);
  EXPECT_EQ(r1cs.header().num_public(), 2u);
  auto zkey = ZkeyFile::open(fixtures / "tiny.zkey");
  EXPECT_EQ(zkey.header().num_vars, 5u);
  EXPECT_EQ(zkey.header().num_public, 2u);
  EXPECT_EQ(zkey.header().num_constraints, 2u);
  EXPECT_EQ(zkey.header().lg_domain, 3u);  // smallest power of two above 2 + 2
}

TEST(CircomFiles, RowsFollowSnarkjs) {
  auto zkey = ZkeyFile::open(fixtures / "tiny.zkey");
  auto rows = circom_rows(zkey, fixtures / "tiny.wtns", fixtures / "tiny.r1cs");
  // Constraint rows as circom writes them: (-a)*b = -c and (-c)*c = a - d; then the public-input
  // rows a = w_s for s = 0..2; zeros up to the domain.
  EXPECT_EQ(rows.a[0], -rows.z[3]);
  EXPECT_EQ(rows.b[0], rows.z[2]);
  EXPECT_EQ(rows.c[0], -rows.z[1]);
  EXPECT_EQ(rows.c[1], rows.z[3] - rows.z[4]);
  for (uint32_t s = 0; s <= 2; ++s) {
    EXPECT_EQ(rows.a[2 + s], rows.z[s]);
    EXPECT_TRUE(rows.b[2 + s].is_zero());
  }
  for (size_t i = 0; i < rows.a.size(); ++i) EXPECT_EQ(rows.c[i], rows.a[i] * rows.b[i]) << "row " << i;
  for (size_t i = 5; i < 8; ++i) EXPECT_TRUE(rows.a[i].is_zero() && rows.b[i].is_zero());
  // Into caller-provided memory (a pinned slab in the engine), whatever it held before.
  std::vector<Fr> a(8, Fr::one()), b(8, Fr::one()), c(8, Fr::one());
  auto z = circom_rows(zkey, fixtures / "tiny.wtns", fixtures / "tiny.r1cs", a, b, c);
  EXPECT_EQ(z, rows.z);
  EXPECT_EQ(a, rows.a);
  EXPECT_EQ(b, rows.b);
  EXPECT_EQ(c, rows.c);
}

TEST(CircomFiles, ProofOfCircomWitnessVerifies) {
  auto zkey = ZkeyFile::open(fixtures / "tiny.zkey");
  auto pk = zkey.proving_key();
  auto rows = circom_rows(zkey, fixtures / "tiny.wtns", fixtures / "tiny.r1cs");
  groth16::CpuBackend backend;
  Rng rng(1);
  auto proof = groth16::prove(backend, pk, rows.a, rows.b, rows.c, rows.z, groth16::Blinding::seeded_for_tests(rng));
  std::vector<Fr> publics(rows.z.begin() + 1, rows.z.begin() + 3);
  EXPECT_TRUE(groth16::verify(pk.verifying_key(), proof, publics)) ;
  publics[0] += Fr::one();
  EXPECT_FALSE(groth16::verify(pk.verifying_key(), proof, publics));
}

TEST(CircomFiles, WorkloadComesFromTheFiles) {
  auto w = describe_circom_workload(fixtures / "tiny.zkey", fixtures / "tiny.wtns");
  EXPECT_EQ(w.num_constraints, 2u);
  EXPECT_EQ(w.num_public, 2u);
  EXPECT_EQ(w.num_vars, 5u);
  EXPECT_EQ(w.lg_domain, 3u);
  EXPECT_EQ(w.zero_scalars, 0u);
  EXPECT_EQ(w.one_scalars, 1u);
  EXPECT_EQ(w.other_scalars, 4u);
  EXPECT_DOUBLE_EQ(w.zero_one_share(), 0.2);
  // c = a*b and d = c*c + a put b and c in B: ONE (1), a (3) and d (33^2 + 3) are absent.
  EXPECT_EQ(w.b_absent_vars, 3u);
  EXPECT_EQ(w.b_absent_one_scalars, 1u);
  EXPECT_EQ(w.b_absent_other_scalars, 2u);
  EXPECT_EQ(ZkeyFile::open(fixtures / "tiny.zkey").b_absent(), ZkeyFile::open(fixtures / "tiny.zkey").proving_key().b_absent);
}

// A file in the temporary folder, removed at the end of the test.
class TempFile {
 public:
  TempFile(std::string_view name, const std::string& bytes)
      : path_(fs::temp_directory_path() / fmt::format("zkpipe-circom-{}-{}", ::getpid(), name)) {
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { fs::remove(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(CircomFiles, WrongWitnessIsCaughtByTheR1cs) {
  auto zkey = ZkeyFile::open(fixtures / "tiny.zkey");
  std::string bytes = slurp(fixtures / "tiny.wtns");
  bytes[payload_offset(bytes, 2) + 4 * 32] ^= 1;  // d: constraint 1 no longer holds
  TempFile wrong("wrong.wtns", bytes);
  expect_error([&] { circom_rows(zkey, wrong.path(), fixtures / "tiny.r1cs"); },
               {"tiny.r1cs", "at byte", "does not satisfy constraint 1"});
  // Without the .r1cs the rows are made, but the proof does not verify (the CLI writes nothing).
  auto pk = zkey.proving_key();
  auto rows = circom_rows(zkey, wrong.path(), std::nullopt);
  groth16::CpuBackend backend;
  Rng rng(5);
  auto proof = groth16::prove(backend, pk, rows.a, rows.b, rows.c, rows.z, groth16::Blinding::seeded_for_tests(rng));
  std::vector<Fr> publics(rows.z.begin() + 1, rows.z.begin() + 3);
  EXPECT_FALSE(groth16::verify(pk.verifying_key(), proof, publics));
}

TEST(CircomFiles, FilesOfAnotherCircuitAreRejected) {
  auto zkey = ZkeyFile::open(fixtures / "tiny.zkey");
  std::string r1cs = slurp(fixtures / "tiny.r1cs");
  put<uint32_t>(r1cs, payload_offset(r1cs, 1) + 4 + 32 + 4 * 4 + 8, 3);  // 3 constraints, not 2
  TempFile other_r1cs("other.r1cs", r1cs);
  expect_error([&] { circom_rows(zkey, fixtures / "tiny.wtns", other_r1cs.path()); },
               {"3 constraints", "2 constraints", "different circuits"});
  std::string wtns = slurp(fixtures / "tiny.wtns");
  wtns.resize(wtns.size() - 32);
  put<uint32_t>(wtns, payload_offset(wtns, 1) + 36, 4);
  put<uint64_t>(wtns, payload_offset(wtns, 2) - 8, 4 * 32);
  TempFile other_wtns("other.wtns", wtns);
  expect_error([&] { circom_rows(zkey, other_wtns.path(), std::nullopt); }, {"4 values", "5 variables", "different circuits"});
  // A key whose first A coefficient (-1 on signal a) became +1: same sizes, another circuit.
  std::string changed = slurp(fixtures / "tiny.zkey");
  uint64_t value = payload_offset(changed, 4) + 4 + 12;
  for (int i = 0; i < 4; ++i) put<uint64_t>(changed, value + 8 * i, bls12_381::FrParams::r2(i));  // 1 as v*R^2
  auto changed_zkey = zkey_of(changed);
  expect_error([&] { circom_rows(changed_zkey, fixtures / "tiny.wtns", fixtures / "tiny.r1cs"); },
               {"tiny.r1cs", "constraint 0's A differs from row 0 of the .zkey", "another circuit"});
}

TEST(ContainerErrors, NameFileOffsetAndExpectation) {
  std::string good = slurp(fixtures / "tiny.wtns");
  expect_error([&] { witness_of("wtn"); }, {"test.wtns", "at byte 0", "found only 3 bytes"});
  expect_error([&] { witness_of("zkey" + good.substr(4)); }, {"at byte 0", "magic 'wtns'", "found 'zkey'"});
  std::string version = good;
  put<uint32_t>(version, 4, 3);
  expect_error([&] { witness_of(version); }, {"at byte 4", "version 2", "found version 3"});
  expect_error([&] { witness_of(good + "x"); }, {"expected the end of the file", "found 1 more bytes"});
  expect_error([&] { witness_of(good.substr(0, good.size() - 1)); }, {"at byte", "to fit in the file"});
  std::string count = good;
  put<uint32_t>(count, 8, 3);
  expect_error([&] { witness_of(count); }, {"header of section 3 of 3"});
  expect_error([&] { witness_of(container("wtns", 2, {{1, "x"}, {1, "y"}})); }, {"section 1 again"});
  expect_error([&] { witness_of(container("wtns", 2, {{2, ""}})); }, {"expected section 1"});
}

TEST(WtnsErrors, AnotherCurveAndValuesAboveTheModulus) {
  std::string good = slurp(fixtures / "tiny.wtns");
  std::string bn254 = good;
  // BN254's r differs from BLS12-381's in the lowest byte.
  bn254[payload_offset(good, 1) + 4] = 0x01 ^ 0x10;
  expect_error([&] { witness_of(bn254); }, {"at byte", "another prime", "bls12381"});
  std::string big = good;
  uint64_t value = payload_offset(good, 2) + 32;
  std::memset(big.data() + value, 0xff, 32);
  expect_error([&] { witness_of(big); }, {fmt::format("at byte {}", value), "witness value 1 below the scalar field's modulus"});
  std::string short_values = good;
  put<uint32_t>(short_values, payload_offset(good, 1) + 36, 6);
  expect_error([&] { witness_of(short_values); }, {"6 x 32 bytes", "found 160 bytes"});
  std::string not_one = good;
  not_one[payload_offset(good, 2)] = 2;
  expect_error([&] { witness_of(not_one); }, {"witness 0 to be the constant 1"});
}

TEST(R1csErrors, WireCoefficientAndCounts) {
  std::string good = slurp(fixtures / "tiny.r1cs");
  uint64_t constraints = payload_offset(good, 2);
  auto z = read_witness(fixtures / "tiny.wtns");
  std::string wire = good;
  put<uint32_t>(wire, constraints + 4, 99);  // first term of constraint 0's A
  expect_error([&] { r1cs_of(wire).check_witness(z); },
               {fmt::format("at byte {}", constraints + 4), "wire below 5", "found wire 99"});
  std::string terms = good;
  put<uint32_t>(terms, constraints, 0xffffffff);
  expect_error([&] { r1cs_of(terms).check_witness(z); }, {fmt::format("at byte {}", constraints), "found 4294967295"});
  std::string wires = good;
  put<uint32_t>(wires, payload_offset(good, 1) + 36, 2);
  expect_error([&] { r1cs_of(wires); }, {"at least 4 wires", "found 2"});
  expect_error([&] { r1cs_of(good).check_witness(std::vector<Fr>(4, Fr::one())); }, {"4 values", "5 wires"});
}

TEST(ZkeyErrors, ProtocolPrimesSizesAndPoints) {
  std::string good = slurp(fixtures / "tiny.zkey");
  std::string plonk = good;
  put<uint32_t>(plonk, payload_offset(good, 1), 2);
  expect_error([&] { zkey_of(plonk); }, {"protocol 1 (Groth16)", "found 2 (PLONK)"});
  std::string bn254 = good;
  put<uint32_t>(bn254, payload_offset(good, 2), 32);  // BN254's q has 32 bytes
  expect_error([&] { zkey_of(bn254); }, {"base field prime q of 48 bytes", "another curve"});
  std::string domain = good;
  uint64_t counts = payload_offset(good, 2) + 4 + 48 + 4 + 32;
  put<uint32_t>(domain, counts + 8, 12);
  expect_error([&] { zkey_of(domain); }, {fmt::format("at byte {}", counts + 8), "power of two", "found 12"});
  std::string vars = good;
  put<uint32_t>(vars, counts, 6);
  expect_error([&] { zkey_of(vars); }, {"A: nVars G1 points"});
  std::string point = good;
  uint64_t h = payload_offset(good, 9);
  point[h + 96 + 7] ^= 0x04;  // H[1].x
  auto zkey = zkey_of(point);
  expect_error([&] { zkey.proving_key(); }, {fmt::format("at byte {}", h + 96), "point 1 of H", "on the curve"});
  std::string record = good;
  uint64_t first = payload_offset(good, 4) + 4;
  put<uint32_t>(record, first + 4, 8);  // row 8 in a domain of 8
  auto bad_row = zkey_of(record);
  auto z = read_witness(fixtures / "tiny.wtns");
  std::vector<Fr> a(8), b(8), c(8);
  expect_error([&] { bad_row.evaluate_rows(z, a, b, c); }, {fmt::format("at byte {}", first + 4), "below the domain size 8"});
}

}  // namespace
}  // namespace zk::circom
