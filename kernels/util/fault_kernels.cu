// fault_kernels.cu — the kernels behind fault_kernels.cuh.
#include "kernels/util/fault_kernels.cuh"

#include "kernels/util/cuda_check.hpp"

namespace zk::cuda {
namespace {

__global__ void noop_kernel() {}

__global__ void illegal_store_kernel(uint32_t* nowhere) { *nowhere = 1; }

__device__ uint64_t global_time_ns() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__global__ void gate_kernel(const volatile uint32_t* open, uint64_t give_up_ns) {
  const uint64_t start = global_time_ns();
  while (*open == 0 && global_time_ns() - start < give_up_ns) __nanosleep(10000);
}

}  // namespace

void launch_invalid_configuration(cudaStream_t stream) {
  constexpr unsigned more_threads_than_a_block_holds = 4096;  // every GPU allows at most 1024
  noop_kernel<<<1, more_threads_than_a_block_holds, 0, stream>>>();
  CUDA_LAUNCH_OK();
}

void launch_illegal_address(cudaStream_t stream) {
  // The first page is never mapped: a store there is an MMU fault on every GPU.
  illegal_store_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<uint32_t*>(uintptr_t{16}));
  CUDA_LAUNCH_OK();
}

void launch_gate(const volatile uint32_t* open, double give_up_s, cudaStream_t stream) {
  gate_kernel<<<1, 1, 0, stream>>>(open, uint64_t(give_up_s * 1e9));
  CUDA_LAUNCH_OK();
}

}  // namespace zk::cuda
