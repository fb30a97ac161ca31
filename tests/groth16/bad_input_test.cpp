// Bad input gives one clear zk::Error, never a crash: truncated or corrupted keys, malformed
// JSON, unknown circuits, impossible sizes.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/circuits/circuit.hpp"
#include "engine/groth16/keys.hpp"
#include "engine/groth16/setup.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "engine/util/error.hpp"

namespace zk::groth16 {
namespace {

namespace fs = std::filesystem;

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zkpipe_bad_input_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    auto circuit = circuits::make_circuit({"dense", 100});
    r1cs::R1csBuilder builder;
    circuit->synthesize(builder, 0);
    pk_ = setup(builder.take(), ToxicWaste::from_seed(1), circuit->spec());
    write_proving_key(pk_, key());
  }
  // Byte offset where matrix C's columns start: the key ends with C's columns then coefficients.
  size_t c_columns_at(size_t file_bytes) const {
    const auto& c = pk_.constraints.c;
    return file_bytes - c.terms() * (sizeof(uint32_t) + sizeof(Fr)) - sizeof(uint64_t);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path key() const { return dir_ / "proving.key"; }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  std::string bytes_of(const fs::path& p) const {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // Expects read to throw zk::Error whose message contains `needle`.
  template <class Fn>
  void expect_error(Fn&& read, const std::string& needle) {
    try {
      read();
      ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  fs::path dir_;
  ProvingKey pk_;
};

TEST_F(BadInput, TruncatedKeyAtEveryRegion) {
  std::string whole = bytes_of(key());
  for (size_t cut : {size_t{0}, size_t{5}, size_t{20}, size_t{200}, whole.size() / 2, whole.size() - 1}) {
    auto p = write("cut.key", whole.substr(0, cut));
    EXPECT_THROW(read_proving_key(p), Error) << "cut at " << cut;
  }
}

TEST_F(BadInput, CorruptedKey) {
  std::string whole = bytes_of(key());
  std::string bad_magic = whole;
  bad_magic[0] = 'X';
  expect_error([&] { read_proving_key(write("m.key", bad_magic)); }, "not a zkpipe proving key");
  const size_t matrices_bytes = pk_.constraints.bytes() + 9 * sizeof(uint64_t);  // with their counts
  std::string bad_point = whole;
  bad_point[whole.size() - matrices_bytes - 100] ^= 0x5a;  // inside the last G2 point
  expect_error([&] { read_proving_key(write("p.key", bad_point)); }, 
               "entry " + std::to_string(pk_.num_vars - 1) + " of b2 is not on the curve");
  std::string bad_column = whole;
  bad_column[c_columns_at(whole.size()) + 3] = char(0xff);  // the first C column, far beyond the variables
  expect_error([&] { read_proving_key(write("c.key", bad_column)); },
               "entry 0 of matrix C columns names a variable beyond the key's variable count");
  std::string bad_coefficient = whole;
  for (size_t i = 0; i < sizeof(Fr); ++i) bad_coefficient[whole.size() - 1 - i] = char(0xff);  // the last C coefficient
  expect_error([&] { read_proving_key(write("k.key", bad_coefficient)); }, "is not a field element");
  std::string longer = whole + "extra";
  expect_error([&] { read_proving_key(write("l.key", longer)); }, "bytes");
  expect_error([&] { read_proving_key(dir_ / "absent.key"); }, "cannot open");
}

// A count the file cannot hold is refused before anything is allocated: matrix C's last row start
// and its column count both claim 2^60 entries (once an uncaught std::bad_alloc).
TEST_F(BadInput, CountsBeyondTheFileAreRefusedBeforeAllocating) {
  std::string whole = bytes_of(key());
  const uint64_t huge = uint64_t{1} << 60;
  const size_t columns_count_at = c_columns_at(whole.size());
  std::memcpy(whole.data() + columns_count_at - sizeof(uint64_t), &huge, sizeof huge);  // C's last row start
  std::memcpy(whole.data() + columns_count_at, &huge, sizeof huge);
  expect_error([&] { read_proving_key(write("huge.key", whole)); }, "matrix C columns has 1152921504606846976 entries");
}

TEST_F(BadInput, MalformedJson) {
  expect_error([&] { read_proof_json(write("a.json", "{\"pi_a\": [1, 2")); }, "not valid JSON");
  expect_error([&] { read_proof_json(write("b.json", "{\"pi_a\": [\"1\",\"2\",\"1\"]}")); }, "not a point on the curve");
  expect_error([&] { read_proof_json(write("c.json", "{\"pi_b\": []}")); }, "missing key");
  expect_error([&] { read_proof_json(write("d.json", "{\"pi_a\": [1, 2, 1]}")); }, "decimal string");
  expect_error([&] { read_public_json(write("e.json", "[\"-5\"]")); }, "not a field element");
  expect_error([&] { read_public_json(write("f.json", "{}")); }, "array");
  expect_error([&] { read_public_json(write("h.json", "[67189078400123509405E764038]")); }, "number overflow");
  expect_error([&] { read_verifying_key_json(write("g.json", "{\"curve\":\"bn128\"}")); }, "bls12381");
}

TEST(BadCircuit, UnknownNameAndSizes) {
  EXPECT_THROW(circuits::make_circuit({"sha256", 100}), Error);
  EXPECT_THROW(circuits::make_circuit({"dense", 0}), Error);
  EXPECT_THROW(circuits::make_circuit({"dense", 1}), Error);
  EXPECT_THROW(circuits::make_circuit({"dense", uint64_t{1} << 40}), Error);
}

}  // namespace
}  // namespace zk::groth16
