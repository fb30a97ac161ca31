// gpu_setup_test.cpp — setup's fixed-base products on the GPU equal the CPU's (FixedBaseTable) in
// G1 and G2 on fresh random scalars, with 0, 1, r - 1 and repeats among them and counts that
// cross chunk boundaries; a whole setup with the GPU's products gives the CPU's key, point for
// point, and that key proves and verifies.
#include <string>
#include <type_traits>
#include <vector>

#include "engine/groth16/backend_registry.hpp"
#include "engine/groth16/cpu_backend.hpp"
#include "engine/groth16/prover.hpp"
#include "engine/groth16/setup.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/r1cs/r1cs.hpp"
#include "engine/util/rng.hpp"
#include "kernels/ec/fixed_base_cuda.cuh"
#include "tests/gpu/gpu_test_support.hpp"

namespace zk::ec {
namespace {

using bls12_381::Fr;

template <class Curve>
affine_t<Curve> generator() {
  if constexpr (std::is_same_v<Curve, bls12_381::G1Curve>) return bls12_381::g1_generator();
  else return bls12_381::g2_generator();
}

template <class Curve>
class GpuFixedBase : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_WITHOUT_CUDA_DEVICE(); }
};
using Curves = ::testing::Types<bls12_381::G1Curve, bls12_381::G2Curve>;
TYPED_TEST_SUITE(GpuFixedBase, Curves);

TYPED_TEST(GpuFixedBase, EqualsCpuProductsAcrossChunks) {
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng rng(seed);
  FixedBaseTable<TypeParam> cpu(generator<TypeParam>());
  for (size_t count : {size_t{1}, size_t{999}, size_t{1000}, size_t{2517}}) {
    std::vector<Fr> scalars(count);
    for (auto& k : scalars) k = rng.field<Fr>();
    scalars[0] = count > 1 ? Fr::zero() : -Fr::one();
    if (count > 3) scalars[1] = Fr::one(), scalars[2] = -Fr::one(), scalars[3] = scalars[count - 1];
    CudaFixedBase<TypeParam> gpu(cpu.entries(), /*chunk_points=*/1000);
    std::vector<affine_t<TypeParam>> out(count);
    gpu.mul_many(scalars, out);
    const auto expected = cpu.mul_many(scalars);
    for (size_t i = 0; i < count; ++i) ASSERT_TRUE(out[i] == expected[i]) << "count " << count << " point " << i;
  }
}

}  // namespace
}  // namespace zk::ec

namespace zk::groth16 {
namespace {

TEST(GpuSetup, KeyEqualsCpuKeyAndProves) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto circuit = circuits::make_circuit({"poseidon-merkle", 3000});
  r1cs::R1csBuilder builder;
  circuit->synthesize(builder, 0);
  const r1cs::R1cs r1cs = builder.take();
  const ToxicWaste waste = ToxicWaste::from_seed(seed);
  const ProvingKey cpu_key = setup(r1cs, waste, circuit->spec());
  auto gpu = make_fixed_base_multiplier("cuda");
  const ProvingKey gpu_key = setup(r1cs, waste, circuit->spec(), {}, gpu.get());
  EXPECT_TRUE(gpu_key.alpha1 == cpu_key.alpha1 && gpu_key.delta2 == cpu_key.delta2);
  EXPECT_TRUE(gpu_key.a == cpu_key.a);
  EXPECT_TRUE(gpu_key.b1 == cpu_key.b1);
  EXPECT_TRUE(gpu_key.l == cpu_key.l);
  EXPECT_TRUE(gpu_key.h == cpu_key.h);
  EXPECT_TRUE(gpu_key.ic == cpu_key.ic);
  EXPECT_TRUE(gpu_key.b2 == cpu_key.b2);

  Rng rng(seed);
  std::vector<Fr> a(gpu_key.domain_size()), b(a.size()), c(a.size());
  const auto z = synthesize(*circuit, rng.next_u64(), gpu_key, a, b, c);
  CpuBackend cpu;
  cpu.prepare(gpu_key, {});
  const Proof proof = prove(cpu, gpu_key, a, b, c, z, Blinding::seeded_for_tests(rng));
  const std::vector<Fr> publics(z.begin() + 1, z.begin() + 1 + gpu_key.num_public);
  const Verdict verdict = verify(gpu_key.verifying_key(), proof, publics);
  EXPECT_TRUE(verdict) << verdict.reason;
}

}  // namespace
}  // namespace zk::groth16
