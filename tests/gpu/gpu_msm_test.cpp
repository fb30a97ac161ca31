// gpu_msm_test.cu — the CUDA MSM and batch addition equal the CPU's (pippenger_cpu.hpp) in G1 and
// G2 on fresh random inputs: sizes that are not powers of two, every window width, index lists,
// all-zero and all-one scalars, scalars near the group order, repeated bases and their negations,
// points at infinity, 0/1-heavy scalars as Filecoin-like witnesses have them, and one digit
// decomposition shared by G1 and G2 MSMs. Booth digits are checked on the host too (that test
// runs without a GPU).
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/util/rng.hpp"
#include "kernels/ec/addition_runs_cuda.cuh"
#include "kernels/msm/pippenger_cpu.hpp"
#include "kernels/msm/pippenger_cuda.cuh"
#include "kernels/msm/sample_points.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace zk::msm {
namespace {

using bls12_381::G1Curve;
using bls12_381::G2Curve;

// r - k for small k, as a Montgomery-form Fr.
Fr order_minus(uint64_t k) { return -Fr::from_u64(k); }

TEST(BoothDigit, EqualsCpuSignedDigitForEveryWindowWidth) {
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    Scalar256 s;
    Fr x = trial == 0 ? order_minus(1) : rng.field<Fr>();
    x.to_canonical(s.limbs);
    for (int c = 2; c <= 24; ++c)
      for (int w = 0; w < GpuMsmPolicy::windows(c); ++w)
        ASSERT_EQ(booth_digit(s.limbs, w, c), signed_digit(s, w, c)) << "c " << c << " w " << w;
  }
}

// Every layout's windows lie end to end, each digit within its window's magnitude bits, and their
// digits, each weighed by 2^offset, sum to the scalar; over a table of one set the windows end at
// the scalar's last bit wherever narrowing some by one bit can make them.
TEST(BoothDigit, EveryLayoutsWindowsSumToTheScalar) {
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng rng(seed);
  for (const DigitLayout layout : {DigitLayout::per_window(), DigitLayout::fixed_base(1), DigitLayout::fixed_base(2)})
    for (int c = 2; c <= 24; ++c) {
      const int windows = GpuMsmPolicy::windows(c);
      ASSERT_EQ(layout.window_offset(c, 0), 0);
      for (int w = 0; w + 1 < windows; ++w)
        ASSERT_EQ(layout.window_offset(c, w + 1), layout.window_offset(c, w) + layout.window_width(c, w)) << c;
      const int top = layout.window_offset(c, windows - 1), end = top + layout.window_width(c, windows - 1);
      ASSERT_GE(end, GpuMsmPolicy::scalar_bits + 1) << c;
      if (layout == DigitLayout::fixed_base(1) && windows * c - (GpuMsmPolicy::scalar_bits + 1) <= windows) {
        ASSERT_EQ(end, GpuMsmPolicy::scalar_bits + 1) << c;
      }
      for (int trial = 0; trial < 20; ++trial) {
        Scalar256 s;
        const Fr x = trial == 0 ? order_minus(1) : rng.field<Fr>();
        x.to_canonical(s.limbs);
        Fr sum = Fr::zero();
        for (int w = 0; w < windows; ++w) {
          const int32_t d = booth_digit_at(s.limbs, layout.window_offset(c, w), layout.window_width(c, w));
          ASSERT_LE(std::abs(d), 1 << (layout.window_width(c, w) - 1)) << "c " << c << " w " << w;
          const Fr magnitude = Fr::from_u64(uint64_t(std::abs(d))) * Fr::from_u64(2).pow_u64(layout.window_offset(c, w));
          sum = d < 0 ? sum - magnitude : sum + magnitude;
        }
        ASSERT_TRUE(sum == x) << "c " << c;
      }
    }
}

template <class Curve>
class GpuMsm : public ::testing::Test {
 protected:
  using Affine = ec::affine_t<Curve>;
  using Point = ec::jacobian_t<Curve>;

  void SetUp() override {
    SKIP_WITHOUT_CUDA_DEVICE();
    stream_ = std::make_unique<cuda::CudaStream>();
    seed_ = test::fresh_seed();
    bases_ = sample_points<Curve>(kBases, generator(), seed_);
  }
  static Affine generator() {
    if constexpr (std::is_same_v<Curve, G1Curve>) return bls12_381::g1_generator();
    else return bls12_381::g2_generator();
  }

  // GPU msm of (bases[index[i]] or bases[i], scalars) against the CPU's.
  void check_msm(std::span<const Affine> bases, std::span<const uint32_t> index, std::span<const Fr> scalars,
                 const std::string& what, int window_bits = 0) {
    SCOPED_TRACE(what + " n " + std::to_string(scalars.size()) + " c " + std::to_string(window_bits) + " seed " +
                 std::to_string(seed_));
    std::vector<Affine> selected;
    for (size_t i = 0; i < scalars.size(); ++i) selected.push_back(bases[index.empty() ? i : index[i]]);
    const Point expected = msm::msm<Curve>(selected, scalars);
    cuda::DeviceBuffer<Affine> d_bases(bases.size());
    cuda::DeviceBuffer<Fr> d_scalars(scalars.size());
    cuda::DeviceBuffer<uint32_t> d_index(index.size());
    d_bases.upload(bases, stream_->get());
    d_scalars.upload(scalars, stream_->get());
    d_index.upload(index, stream_->get());
    const Point actual = gpu_.msm(d_bases.get(), index.empty() ? nullptr : d_index.get(), d_scalars.get(),
                                  scalars.size(), stream_->get(), window_bits);
    EXPECT_TRUE(actual == expected);
    EXPECT_TRUE(actual.is_on_curve());
  }
  void check_sum(std::span<const Affine> bases, std::span<const uint32_t> index, const std::string& what) {
    SCOPED_TRACE(what + " n " + std::to_string(index.size()) + " seed " + std::to_string(seed_));
    std::vector<Affine> selected;
    for (uint32_t i : index) selected.push_back(bases[i]);
    const Point expected = sum_points<Curve>(selected);
    cuda::DeviceBuffer<Affine> d_bases(bases.size());
    cuda::DeviceBuffer<uint32_t> d_index(index.size());
    d_bases.upload(bases, stream_->get());
    d_index.upload(index, stream_->get());
    EXPECT_TRUE(gpu_.sum(d_bases.get(), d_index.get(), index.size(), stream_->get()) == expected);
  }
  // GPU msm over a fixed-base table of `bases` against the CPU's.
  void check_fixed_base_msm(const CudaFixedBases<Curve>& table, std::span<const Affine> bases,
                            std::span<const uint32_t> index, std::span<const Fr> scalars, const std::string& what) {
    SCOPED_TRACE(what + " n " + std::to_string(scalars.size()) + " c " + std::to_string(table.window_bits()) +
                 " seed " + std::to_string(seed_));
    std::vector<Affine> selected;
    for (size_t i = 0; i < scalars.size(); ++i) selected.push_back(bases[index.empty() ? i : index[i]]);
    cuda::DeviceBuffer<Fr> d_scalars(scalars.size());
    cuda::DeviceBuffer<uint32_t> d_index(index.size());
    d_scalars.upload(scalars, stream_->get());
    d_index.upload(index, stream_->get());
    const Point actual = gpu_.msm(table, index.empty() ? nullptr : d_index.get(), d_scalars.get(), scalars.size(),
                                  stream_->get());
    EXPECT_TRUE(actual == msm::msm<Curve>(selected, scalars));
  }
  std::vector<Fr> random_scalars(size_t n, Rng& rng) {
    std::vector<Fr> v(n);
    for (auto& x : v) x = rng.field<Fr>();
    return v;
  }

  static constexpr size_t kBases = 5000;
  uint64_t seed_ = 0;
  std::vector<Affine> bases_;
  std::unique_ptr<cuda::CudaStream> stream_;  // made after the device check
  CudaMsm<Curve> gpu_;
};

using Curves = ::testing::Types<G1Curve, G2Curve>;
TYPED_TEST_SUITE(GpuMsm, Curves);

TYPED_TEST(GpuMsm, RandomScalarsAtSizesThatAreNotPowersOfTwo) {
  Rng rng(this->seed_);
  for (size_t n : {1, 2, 3, 31, 100, 1000, 1023, 1025, 4999}) {
    auto scalars = this->random_scalars(n, rng);
    this->check_msm(this->bases_, {}, scalars, "random");
  }
}

TYPED_TEST(GpuMsm, EveryWindowWidth) {
  Rng rng(this->seed_ + 1);
  auto scalars = this->random_scalars(777, rng);
  for (int c = 2; c <= GpuMsmPolicy::max_window_bits; c += (c < 12 ? 1 : 3)) this->check_msm(this->bases_, {}, scalars, "window", c);
}

TYPED_TEST(GpuMsm, AllZeroAllOneAndNearOrderScalars) {
  const size_t n = 3000;
  std::vector<Fr> zeros(n, Fr::zero()), ones(n, Fr::one()), near(n);
  for (size_t i = 0; i < n; ++i) near[i] = order_minus(1 + i % 7);
  this->check_msm(this->bases_, {}, zeros, "all zero");
  this->check_msm(this->bases_, {}, ones, "all one");
  this->check_msm(this->bases_, {}, near, "near r");
  std::vector<Fr> small(n);
  for (size_t i = 0; i < n; ++i) small[i] = Fr::from_u64(i % 5);
  this->check_msm(this->bases_, {}, small, "small values");
}

TYPED_TEST(GpuMsm, RepeatedBasesNegationsAndInfinity) {
  using Affine = typename TestFixture::Affine;
  Rng rng(this->seed_ + 2);
  std::vector<Affine> bases(this->bases_.begin(), this->bases_.begin() + 2000);
  for (size_t i = 0; i < bases.size(); i += 3) bases[i] = this->bases_[0];        // repeated
  for (size_t i = 1; i < bases.size(); i += 7) bases[i] = -this->bases_[0];       // its negation
  for (size_t i = 2; i < bases.size(); i += 11) bases[i] = Affine::infinity();     // infinity
  auto scalars = this->random_scalars(bases.size(), rng);
  this->check_msm(bases, {}, scalars, "repeated bases, random scalars");
  std::vector<Fr> same(bases.size(), scalars[0]);
  this->check_msm(bases, {}, same, "repeated bases, one scalar");
  std::vector<Fr> ones(bases.size(), Fr::one());
  this->check_msm(bases, {}, ones, "repeated bases, all one");
}

TYPED_TEST(GpuMsm, IndexListsSelectBases) {
  Rng rng(this->seed_ + 3);
  std::vector<uint32_t> index(3333);
  for (auto& i : index) i = static_cast<uint32_t>(rng.below(TestFixture::kBases));
  auto scalars = this->random_scalars(index.size(), rng);
  this->check_msm(this->bases_, index, scalars, "index list");
}

TYPED_TEST(GpuMsm, BatchAdditionEqualsCpuSum) {
  Rng rng(this->seed_ + 4);
  for (size_t n : {0, 1, 2, 129, 1000, 4999, 20000}) {
    std::vector<uint32_t> index(n);
    for (auto& i : index) i = static_cast<uint32_t>(rng.below(TestFixture::kBases));
    this->check_sum(this->bases_, index, "random index");
  }
  std::vector<uint32_t> repeated(3000, 17);
  this->check_sum(this->bases_, repeated, "one base repeated");
}

// The additions that bench_kernels --additions times: every chain's XYZZ sum and every affine sum
// of a batch sharing one inversion equal the host's, over 1,024 of the sample points (every point
// read many times, as a table's are).
TYPED_TEST(GpuMsm, TimedAdditionsEqualTheHosts) {
  using Affine = typename TestFixture::Affine;
  using Point = typename TestFixture::Point;
  constexpr uint32_t m = 1024;
  constexpr size_t additions = 1 << 14;
  cuda::DeviceBuffer<Affine> d_points(m);
  d_points.upload(std::span<const Affine>(this->bases_).first(m), this->stream_->get());
  ec::AdditionRuns<TypeParam> runs(d_points.get(), m, additions);
  const auto point = [&](uint64_t operand) { return Point::from_affine(this->bases_[ec::addition_operand(operand, m)]); };
  for (int steps : {1, 16, 128}) {
    runs.run_xyzz(steps, this->stream_->get());
    const auto sums = runs.chain_sums(this->stream_->get());
    ASSERT_EQ(sums.size(), additions / steps);
    for (size_t t : {size_t{0}, size_t{1}, sums.size() / 3, sums.size() - 1}) {
      Point expected = Point::infinity();
      for (int s = 0; s < steps; ++s) expected = expected + point(t * steps + s);
      EXPECT_TRUE(sums[t].to_jacobian() == expected) << "chain " << t << " of " << steps << " steps";
    }
  }
  for (int batch : {1, 7, 64}) {
    const size_t batched = additions - additions % batch;
    ec::AdditionRuns<TypeParam> batch_runs(d_points.get(), m, batched);
    batch_runs.run_affine(batch, this->stream_->get());
    const auto sums = batch_runs.affine_sums(this->stream_->get());
    ASSERT_EQ(sums.size(), batched);
    for (size_t g = 0; g < batched; g += 97)
      EXPECT_TRUE(Point::from_affine(sums[g]) == point(2 * g) + point(2 * g + 1)) << "sum " << g << " batch " << batch;
  }
  EXPECT_THROW(ec::AdditionRuns<TypeParam>(d_points.get(), 1000, additions), std::invalid_argument);
  EXPECT_THROW(runs.run_affine(3, this->stream_->get()), std::invalid_argument);
}

// Sparse scalars as the witness of a Filecoin-like circuit has them: mostly 0 and 1, a few random.
std::vector<Fr> zero_one_heavy_scalars(size_t n, Rng& rng) {
  std::vector<Fr> scalars(n);
  for (auto& x : scalars) {
    const uint64_t draw = rng.below(100);
    x = draw < 60 ? Fr::zero() : draw < 95 ? Fr::one() : rng.field<Fr>();
  }
  return scalars;
}

// One CudaMsmDigits serves MSMs in G1 and in G2 over the same scalars and index list (the
// prover's A, B_G1 and B_G2): each equals the CPU's MSM, on random and on 0/1-heavy scalars, at
// the policy's window and at others, and the digits outlive one-shot msm() calls made between
// their uses.
TEST(GpuMsmDigits, OneDecompositionServesG1AndG2) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng rng(seed);
  constexpr size_t kBases = 3000, n = 2500;
  const auto g1_bases = sample_points<G1Curve>(kBases, bls12_381::g1_generator(), seed);
  const auto g2_bases = sample_points<G2Curve>(kBases, bls12_381::g2_generator(), seed + 1);
  cuda::CudaStream stream;
  cuda::DeviceBuffer<bls12_381::G1Affine> d_g1(kBases);
  cuda::DeviceBuffer<bls12_381::G2Affine> d_g2(kBases);
  d_g1.upload(g1_bases, stream.get());
  d_g2.upload(g2_bases, stream.get());
  CudaMsm<G1Curve> g1;
  CudaMsm<G2Curve> g2;
  CudaMsmDigits digits;
  for (const bool sparse : {false, true}) {
    for (const int window_bits : {0, 5, 13}) {
      SCOPED_TRACE(std::string(sparse ? "0/1-heavy" : "random") + " scalars, window " + std::to_string(window_bits));
      std::vector<Fr> scalars(n);
      if (sparse) scalars = zero_one_heavy_scalars(n, rng);
      else for (auto& x : scalars) x = rng.field<Fr>();
      std::vector<uint32_t> index(n);
      for (auto& i : index) i = static_cast<uint32_t>(rng.below(kBases));
      std::vector<bls12_381::G1Affine> g1_selected;
      std::vector<bls12_381::G2Affine> g2_selected;
      for (uint32_t i : index) g1_selected.push_back(g1_bases[i]), g2_selected.push_back(g2_bases[i]);
      cuda::DeviceBuffer<Fr> d_scalars(n);
      cuda::DeviceBuffer<uint32_t> d_index(n);
      d_scalars.upload(scalars, stream.get());
      d_index.upload(index, stream.get());
      digits.compute(d_scalars.get(), n, stream.get(), window_bits);
      const auto g1_expected = msm::msm<G1Curve>(g1_selected, scalars);
      EXPECT_TRUE(g1.msm(d_g1.get(), d_index.get(), digits.sorted(), stream.get()) == g1_expected);
      EXPECT_TRUE(g2.msm(d_g2.get(), d_index.get(), digits.sorted(), stream.get()) ==
                  msm::msm<G2Curve>(g2_selected, scalars));
      const std::vector<Fr> other(kBases, Fr::from_u64(3));
      cuda::DeviceBuffer<Fr> d_other(kBases);
      d_other.upload(other, stream.get());
      EXPECT_TRUE(g1.msm(d_g1.get(), nullptr, d_other.get(), kBases, stream.get()) == msm::msm<G1Curve>(g1_bases, other));
      EXPECT_TRUE(g1.msm(d_g1.get(), d_index.get(), digits.sorted(), stream.get()) == g1_expected);
    }
  }
}

// A fixed-base table of k bucket sets holds each base times 2^offset(k r) in row r, and MSMs over it
// (window k r + s in set s) equal the CPU's on random, 0/1-heavy and index-selected scalars, at
// several window widths, with a row for every window (k = 1), every other window's (k = 2), and
// k = 3, which divides none of these widths' window counts (86, 32, 20): the last rows padded.
TYPED_TEST(GpuMsm, FixedBaseTablesEqualCpu) {
  using Affine = ec::affine_t<TypeParam>;
  using Point = ec::jacobian_t<TypeParam>;
  Rng rng(this->seed_ + 7);
  cuda::DeviceBuffer<Affine> d_bases(this->kBases);
  d_bases.upload(this->bases_, this->stream_->get());
  const std::pair<int, int> widths_and_sets[] = {{3, 1}, {8, 1}, {13, 1}, {3, 2}, {13, 2}, {3, 3}, {8, 3}, {13, 3}};
  for (const auto& [c, sets] : widths_and_sets) {
    SCOPED_TRACE("bucket sets " + std::to_string(sets));
    CudaFixedBases<TypeParam> table;
    table.build(d_bases.get(), this->kBases, this->stream_->get(), c, sets);
    const int rows = GpuMsmPolicy::table_rows(c, sets);
    ASSERT_EQ(table.bytes(), size_t(rows) * this->kBases * sizeof(Affine));
    ASSERT_EQ(table.bytes(), CudaFixedBases<TypeParam>::table_bytes(this->kBases, c, sets));
    std::vector<Affine> row(this->kBases);
    const int r = rows - 1;
    CUDA_OK(cudaMemcpy(row.data(), table.table() + r * this->kBases, row.size() * sizeof(Affine), cudaMemcpyDeviceToHost));
    for (size_t i : {size_t{0}, size_t{1}, this->kBases - 1}) {
      Point expected = Point::from_affine(this->bases_[i]);
      for (int b = 0; b < DigitLayout::fixed_base(sets).row_offset(c, r); ++b) expected = expected.dbl();
      EXPECT_TRUE(Point::from_affine(row[i]) == expected) << "row " << r << " base " << i << " c " << c;
    }
    for (size_t n : {size_t{1}, size_t{100}, this->kBases})
      this->check_fixed_base_msm(table, this->bases_, {}, this->random_scalars(n, rng), "fixed-base random");
    this->check_fixed_base_msm(table, this->bases_, {}, zero_one_heavy_scalars(3000, rng), "fixed-base 0/1-heavy");
    std::vector<uint32_t> index(777);
    for (auto& i : index) i = static_cast<uint32_t>(rng.below(this->kBases));
    this->check_fixed_base_msm(table, this->bases_, index, this->random_scalars(index.size(), rng), "fixed-base index");
  }
}

TYPED_TEST(GpuMsm, ZeroOneHeavyScalars) {
  Rng rng(this->seed_ + 5);
  for (size_t n : {1, 100, 4999}) this->check_msm(this->bases_, {}, zero_one_heavy_scalars(n, rng), "0/1-heavy");
}

// 2^17 + 1 points: random scalars (a bucket's pairs in one or two chunks: no fold pass), 0/1-heavy
// ones (bucket 1 of the first window ~360 segment sums: two passes) and one scalar repeated
// (each window's pairs in one bucket, about 1,025 segment sums: three passes).
TEST(GpuMsmLarge, G1AtTwoToTheSeventeenPlusOne) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng rng(seed);
  const size_t n = (size_t{1} << 17) + 1;
  auto bases = sample_points<G1Curve>(n, bls12_381::g1_generator(), seed);
  std::vector<Fr> random(n);
  for (auto& x : random) x = rng.field<Fr>();
  const std::vector<Fr> repeated(n, rng.field<Fr>());
  cuda::CudaStream stream;
  cuda::DeviceBuffer<bls12_381::G1Affine> d_bases(n);
  cuda::DeviceBuffer<Fr> d_scalars(n);
  d_bases.upload(bases, stream.get());
  CudaMsm<G1Curve> gpu;
  for (const auto& [name, scalars] : {std::pair{"random", random}, std::pair{"0/1-heavy", zero_one_heavy_scalars(n, rng)},
                                      std::pair{"one scalar repeated", repeated}}) {
    SCOPED_TRACE(name);
    d_scalars.upload(scalars, stream.get());
    EXPECT_TRUE(gpu.msm(d_bases.get(), nullptr, d_scalars.get(), n, stream.get()) == msm::msm<G1Curve>(bases, scalars));
  }
}

}  // namespace
}  // namespace zk::msm
