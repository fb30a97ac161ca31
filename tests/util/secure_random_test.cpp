// SecureRandom: getrandom's EINTR and short reads are retried to the end, its failures become one
// zk::Error, and the field elements drawn are reduced, distinct and use every bit.
#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <set>

#include "engine/util/error.hpp"
#include "engine/util/secure_random.hpp"
#include "kernels/ff/bls12-381.hpp"

namespace zk {
namespace {

using bls12_381::Fr;

// A source that answers with a script of results: n > 0 fills n bytes of 0xAB, -errno fails.
std::vector<int> script;
size_t calls = 0;
ssize_t scripted_read(void* buffer, size_t length, unsigned) {
  const int result = script.at(calls++);
  if (result < 0) {
    errno = -result;
    return -1;
  }
  const size_t n = std::min(length, size_t(result));
  std::memset(buffer, 0xAB, n);
  return ssize_t(n);
}

void run_script(std::vector<int> results, std::span<std::byte> out) {
  script = std::move(results), calls = 0;
  fill_random_bytes(out, scripted_read);
}

TEST(SecureRandom, ShortReadsAndInterruptionsAreCompleted) {
  std::array<std::byte, 32> out{};
  run_script({5, -EINTR, 1, -EINTR, -EINTR, 26}, out);
  EXPECT_EQ(calls, 6u);
  for (std::byte b : out) EXPECT_EQ(b, std::byte{0xAB});
}

TEST(SecureRandom, AFailingSourceIsOneClearError) {
  std::array<std::byte, 32> out{};
  for (const std::vector<int>& results : {std::vector<int>{4, -ENOSYS}, std::vector<int>{0}}) {
    try {
      run_script(results, out);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("getrandom failed"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("random source is unavailable"), std::string::npos) << e.what();
    }
  }
  run_script({4, -ENOSYS}, {});  // nothing asked, nothing read
  EXPECT_EQ(calls, 0u);
}

TEST(SecureRandom, FieldElementsAreReducedDistinctAndUseEveryBit) {
  SecureRandom random;
  std::set<std::array<uint64_t, Fr::N>> seen;
  std::array<int, 255> ones{};
  const int draws = 2000;
  for (int i = 0; i < draws; ++i) {
    const Fr x = random.field<Fr>();
    ASSERT_TRUE(x.is_reduced());
    std::array<uint64_t, Fr::N> limbs;
    x.to_canonical(limbs.data());
    EXPECT_TRUE(seen.insert(limbs).second) << "a value repeated";
    for (int bit = 0; bit < 255; ++bit) ones[bit] += (limbs[bit / 64] >> (bit % 64)) & 1;
  }
  // Every bit below the top few is set in about half the draws (0.5 +- 5 sigma of 2000 draws).
  for (int bit = 0; bit < 250; ++bit) {
    EXPECT_GT(ones[bit], draws / 2 - 112) << "bit " << bit;
    EXPECT_LT(ones[bit], draws / 2 + 112) << "bit " << bit;
  }
}

}  // namespace
}  // namespace zk
