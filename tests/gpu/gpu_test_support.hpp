// gpu_test_support.hpp — what every GPU test shares: a clean skip where no CUDA device exists,
// fresh random seeds that a failure prints (replay by exporting ZKPIPE_TEST_SEED), and the
// device's free bytes.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>

#include "kernels/util/cuda_check.hpp"

#define SKIP_WITHOUT_CUDA_DEVICE()                                                         \
  do {                                                                                     \
    if (::zk::cuda::cuda_device_count() == 0)                                              \
      GTEST_SKIP() << "no CUDA device found (cudaGetDeviceCount reports none): GPU test skipped"; \
  } while (0)

namespace zk::test {

// A fresh seed per call, or ZKPIPE_TEST_SEED when set; SCOPED_TRACE it so failures show it.
inline uint64_t fresh_seed() {
  if (const char* fixed = std::getenv("ZKPIPE_TEST_SEED")) return std::strtoull(fixed, nullptr, 0);
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

// The current device's free bytes, as the driver counts them.
inline size_t free_device_bytes() {
  size_t free = 0, total = 0;
  CUDA_OK(cudaMemGetInfo(&free, &total));
  return free;
}

}  // namespace zk::test
