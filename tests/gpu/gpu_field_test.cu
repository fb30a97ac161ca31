// gpu_field_test.cu — the GPU's Fp2 products and squares (kernels/ff/fp2.hpp: the device's lazy
// Karatsuba over mont_ptx.hpp's double-width product and reduction) and its differences of two
// products a b - c d in Fp (mul_sub_mul: one reduction) and in Fp2 equal the
// schoolbook formulas over the CPU's Fp products, on every pair of Fp2 elements built from edge
// values of the representation (c, d: the pairs in reverse order) and on fresh random elements.
// Results must match limb for limb, so they are fully reduced (< p) as the rest of the code expects.
// Chains of products and of squares (product_chains_cuda) end where the host's do, in Fp and Fr.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "engine/util/rng.hpp"
#include "kernels/ff/fp2.hpp"
#include "kernels/ff/product_chains_cuda.cuh"
#include "tests/gpu/gpu_test_support.hpp"

namespace zk::bls12_381 {
namespace {

// Per i, with c[i] = b[n - 1 - i] and d[i] = a[n - 1 - i]: a b, a^2, a b - c d in Fp2 and in Fp
// (on the real parts).
__global__ void fp2_products_kernel(const Fp2* a, const Fp2* b, size_t n, Fp2* products, Fp2* squares,
                                    Fp2* differences, Fp* fp_differences) {
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  const Fp2 &c = b[n - 1 - i], &d = a[n - 1 - i];
  products[i] = a[i] * b[i];
  squares[i] = a[i].sqr();
  differences[i] = Fp2::mul_sub_mul(a[i], b[i], c, d);
  fp_differences[i] = Fp::mul_sub_mul(a[i].c0, b[i].c0, c.c0, d.c0);
}

struct DeviceResults {
  std::vector<Fp2> products, squares, differences;
  std::vector<Fp> fp_differences;
};

// fp2_products_kernel's results for a and b.
DeviceResults device_products(const std::vector<Fp2>& a, const std::vector<Fp2>& b) {
  const size_t n = a.size();
  cuda::CudaStream stream;
  cuda::DeviceBuffer<Fp2> d_a(n), d_b(n), d_products(n), d_squares(n), d_differences(n);
  cuda::DeviceBuffer<Fp> d_fp_differences(n);
  d_a.upload(a, stream.get());
  d_b.upload(b, stream.get());
  constexpr unsigned threads = 128;
  fp2_products_kernel<<<unsigned((n + threads - 1) / threads), threads, 0, stream.get()>>>(
      d_a.get(), d_b.get(), n, d_products.get(), d_squares.get(), d_differences.get(), d_fp_differences.get());
  CUDA_LAUNCH_OK();
  DeviceResults results{std::vector<Fp2>(n), std::vector<Fp2>(n), std::vector<Fp2>(n), std::vector<Fp>(n)};
  d_products.download(results.products, stream.get());
  d_squares.download(results.squares, stream.get());
  d_differences.download(results.differences, stream.get());
  d_fp_differences.download(results.fp_differences, stream.get());
  stream.synchronize();
  return results;
}

// (a0 b0 - a1 b1) + (a0 b1 + a1 b0) u on the CPU's Fp products.
Fp2 schoolbook_product(const Fp2& a, const Fp2& b) {
  return {a.c0 * b.c0 - a.c1 * b.c1, a.c0 * b.c1 + a.c1 * b.c0};
}

// The field element whose Montgomery limbs are `limbs` (a value below the modulus).
template <class F>
F from_limbs(const std::array<uint64_t, F::N>& limbs) {
  F x;
  for (int i = 0; i < F::N; ++i) x.l[i] = limbs[i];
  return x;
}

// Edge values of the limbs the GPU works on: 0, 1, 2, R mod m (F::one), m - 1 and m - 2 (the
// largest: their sums and products are the largest the bounds allow), the largest values below
// m whose words under the top limb, or under the top 32-bit word, are all ones, and 2^32 and
// 2^64, whose zero low words make a Montgomery row's quotient zero (no word product of the
// modulus to add: Fr's reduction takes that case apart from the others).
template <class F>
std::vector<F> edge_values() {
  constexpr int N = F::N;
  using Limbs = std::array<uint64_t, N>;
  Limbs m{};
  for (int i = 0; i < N; ++i) m[i] = F::params::modulus(i);
  auto low_limbs = [](uint64_t l0, uint64_t l1) { Limbs v{}; v[0] = l0, v[1] = l1; return from_limbs<F>(v); };
  auto modulus_less = [&](uint64_t d) { Limbs v = m; v[0] -= d; return from_limbs<F>(v); };
  auto ones_under = [](uint64_t top) { Limbs v; v.fill(~uint64_t{0}); v[N - 1] = top; return from_limbs<F>(v); };
  return {F::zero(), low_limbs(1, 0), low_limbs(2, 0), F::one(), modulus_less(1), modulus_less(2),
          ones_under(m[N - 1] - 1), ones_under((m[N - 1] & 0xffffffff00000000) - 1),
          low_limbs(uint64_t{1} << 32, 0), low_limbs(0, 1)};
}

void expect_products_equal_the_cpus(const std::vector<Fp2>& a, const std::vector<Fp2>& b) {
  const DeviceResults gpu = device_products(a, b);
  int failures = 0;
  const size_t n = a.size();
  for (size_t i = 0; i < n && failures < 10; ++i) {
    const Fp2 &c = b[n - 1 - i], &d = a[n - 1 - i];
    const bool product_ok = gpu.products[i] == schoolbook_product(a[i], b[i]);
    const bool square_ok = gpu.squares[i] == schoolbook_product(a[i], a[i]);
    const bool difference_ok = gpu.differences[i] == schoolbook_product(a[i], b[i]) - schoolbook_product(c, d);
    const bool fp_difference_ok = gpu.fp_differences[i] == a[i].c0 * b[i].c0 - c.c0 * d.c0;
    EXPECT_TRUE(product_ok) << "product, pair " << i;
    EXPECT_TRUE(square_ok) << "square, pair " << i;
    EXPECT_TRUE(difference_ok) << "Fp2 a b - c d, pair " << i;
    EXPECT_TRUE(fp_difference_ok) << "Fp a b - c d, pair " << i;
    failures += !product_ok || !square_ok || !difference_ok || !fp_difference_ok;
  }
}

TEST(GpuField, Fp2ProductsOfEdgeValuesEqualTheCpus) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const std::vector<Fp> edges = edge_values<Fp>();
  std::vector<Fp2> elements, a, b;
  for (const Fp& c0 : edges)
    for (const Fp& c1 : edges) elements.push_back({c0, c1});
  for (const Fp2& x : elements)
    for (const Fp2& y : elements) a.push_back(x), b.push_back(y);
  expect_products_equal_the_cpus(a, b);
}

TEST(GpuField, Fp2ProductsOfRandomElementsEqualTheCpus) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng rng(seed);
  std::vector<Fp2> a(1 << 14), b(1 << 14);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = {rng.field<Fp>(), rng.field<Fp>()};
    b[i] = {rng.field<Fp>(), rng.field<Fp>()};
  }
  expect_products_equal_the_cpus(a, b);
}

// x y^steps, or x^(2^steps) when squaring, by the host's products, for every (x, y) = (values[2i],
// values[2i + 1]).
template <class F>
std::vector<F> host_chains(const std::vector<F>& values, int steps, bool square) {
  std::vector<F> out;
  for (size_t i = 0; i + 1 < values.size(); i += 2) {
    F x = values[i];
    for (int s = 0; s < steps; ++s) x = square ? x * x : x * values[i + 1];
    out.push_back(x);
  }
  return out;
}

template <class F>
void expect_same(const std::vector<F>& gpu, const std::vector<F>& cpu, std::string_view kind) {
  ASSERT_EQ(gpu.size(), cpu.size());
  int failures = 0;
  for (size_t i = 0; i < gpu.size() && failures < 10; ++i) {
    const bool same = gpu[i] == cpu[i];
    EXPECT_TRUE(same) << kind << " chain " << i;
    failures += !same;
  }
}

// Every pair of edge values laid end to end, then random values up to `count`.
template <class F>
std::vector<F> edge_pairs_then_random(Rng& rng, size_t count) {
  const std::vector<F> edges = edge_values<F>();
  std::vector<F> values;
  for (const F& x : edges)
    for (const F& y : edges) values.push_back(x), values.push_back(y);
  while (values.size() < count) values.push_back(rng.field<F>());
  return values;
}

// The chains' first values: every pair of edge values, then random ones. The device's squares
// (mont_sqr: each cross product once, doubled) against the host's products of x by itself.
TEST(GpuField, ProductAndSquareChainsEndWhereTheHostsDo) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng rng(seed);
  const std::vector<Fp> fp = edge_pairs_then_random<Fp>(rng, 2 * 4096);
  const std::vector<Fr> fr = edge_pairs_then_random<Fr>(rng, 2 * 4096);
  constexpr int steps = 16;
  ff::ProductChains chains(fp, fr, steps);
  cuda::CudaStream stream;
  for (const ff::ProductKind kind : ff::kProductKinds) {
    chains.run(kind, stream.get());
    const bool square = kind == ff::ProductKind::fp_sqr || kind == ff::ProductKind::fr_sqr;
    if (kind == ff::ProductKind::fp_mul || kind == ff::ProductKind::fp_sqr)
      expect_same(chains.fp_results(stream.get()), host_chains(fp, steps, square), ff::product_kind_name(kind));
    else
      expect_same(chains.fr_results(stream.get()), host_chains(fr, steps, square), ff::product_kind_name(kind));
  }
}

}  // namespace
}  // namespace zk::bls12_381
