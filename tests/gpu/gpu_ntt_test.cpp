// gpu_ntt_test.cu — the CUDA NTT equals the CPU NTT (ntt, intt, coset_ntt, the prover's quotient)
// on fresh random inputs at every size from 2^1 to 2^20, across the pass boundaries of the plan.
#include <memory>
#include <string>
#include <vector>

#include "engine/groth16/cpu_backend.hpp"
#include "engine/util/rng.hpp"
#include "kernels/ntt/ntt_cpu.hpp"
#include "kernels/ntt/ntt_cuda.cuh"
#include "tests/gpu/gpu_test_support.hpp"

namespace zk::ntt {
namespace {

std::vector<Fr> random_vector(size_t n, Rng& rng) {
  std::vector<Fr> v(n);
  for (auto& x : v) x = rng.field<Fr>();
  return v;
}

// Index of the first difference, or -1.
long first_difference(const std::vector<Fr>& a, const std::vector<Fr>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return static_cast<long>(i);
  return -1;
}

class GpuNtt : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_CUDA_DEVICE();
    stream_ = std::make_unique<cuda::CudaStream>();
  }

  enum class Kind { forward, inverse, coset };
  // Runs one transform on the GPU and on the CPU from the same random input; returns both.
  void check(int lg_n, Kind kind) {
    const uint64_t seed = test::fresh_seed();
    SCOPED_TRACE("lg_n " + std::to_string(lg_n) + " kind " + std::to_string(int(kind)) + " seed " + std::to_string(seed));
    Rng rng(seed);
    Domain domain(lg_n);
    std::vector<Fr> input = random_vector(domain.n, rng), expected = input, actual(domain.n);
    const Fr shift = rng.field<Fr>();
    cuda::DeviceBuffer<Fr> d(domain.n);
    d.upload(input, stream_->get());
    switch (kind) {
      case Kind::forward:
        ntt(expected, domain);
        gpu_.ntt(d.get(), domain, stream_->get());
        break;
      case Kind::inverse:
        intt(expected, domain);
        gpu_.intt(d.get(), domain, stream_->get());
        break;
      case Kind::coset:
        coset_ntt(expected, domain, shift);
        gpu_.coset_ntt(d.get(), domain, shift, stream_->get());
        break;
    }
    d.download(actual, stream_->get());
    stream_->synchronize();
    EXPECT_EQ(first_difference(actual, expected), -1);
  }

  std::unique_ptr<cuda::CudaStream> stream_;  // made after the device check
  CudaNtt gpu_;
};

TEST_F(GpuNtt, ForwardMatchesCpuAtEverySize) {
  for (int lg = 1; lg <= 20; ++lg) check(lg, Kind::forward);
}
TEST_F(GpuNtt, InverseMatchesCpuAtEverySize) {
  for (int lg = 1; lg <= 20; ++lg) check(lg, Kind::inverse);
}
TEST_F(GpuNtt, CosetMatchesCpuAtEverySize) {
  for (int lg = 1; lg <= 20; ++lg) check(lg, Kind::coset);
}

TEST_F(GpuNtt, InverseUndoesForwardAtLargeSizes) {
  for (int lg : {22, 24}) {
    const uint64_t seed = test::fresh_seed();
    SCOPED_TRACE("lg_n " + std::to_string(lg) + " seed " + std::to_string(seed));
    Rng rng(seed);
    Domain domain(lg);
    std::vector<Fr> input = random_vector(domain.n, rng), output(domain.n);
    cuda::DeviceBuffer<Fr> d(domain.n);
    d.upload(input, stream_->get());
    gpu_.ntt(d.get(), domain, stream_->get());
    d.download(output, stream_->get());
    stream_->synchronize();
    EXPECT_NE(first_difference(output, input), -1);
    gpu_.intt(d.get(), domain, stream_->get());
    d.download(output, stream_->get());
    stream_->synchronize();
    EXPECT_EQ(first_difference(output, input), -1);
  }
}

TEST_F(GpuNtt, QuotientMatchesCpuBackend) {
  for (int lg : {1, 4, 10, 11, 13, 17, 19}) {
    const uint64_t seed = test::fresh_seed();
    SCOPED_TRACE("lg_n " + std::to_string(lg) + " seed " + std::to_string(seed));
    Rng rng(seed);
    Domain domain(lg);
    std::vector<Fr> a = random_vector(domain.n, rng), b = random_vector(domain.n, rng), c = random_vector(domain.n, rng);
    cuda::DeviceBuffer<Fr> d(3 * domain.n);
    d.upload(a, stream_->get(), 0);
    d.upload(b, stream_->get(), domain.n);
    d.upload(c, stream_->get(), 2 * domain.n);
    gpu_.quotient_evaluations(d.get(), d.get() + domain.n, d.get() + 2 * domain.n, domain, stream_->get());
    std::vector<Fr> actual(domain.n);
    d.download(actual, stream_->get(), 0);
    stream_->synchronize();
    groth16::CpuBackend().quotient_evaluations(a, b, c, domain);
    EXPECT_EQ(first_difference(actual, a), -1);
  }
}

}  // namespace
}  // namespace zk::ntt
