// fault_kernels.cuh — real CUDA failures on demand, for fault injection on a real device
// (engine/pipeline/faulty_cuda_backend.hpp). Each launcher enqueues on `stream` and reports what
// CUDA reports, the way every other launcher does (CUDA_OK / CUDA_LAUNCH_OK throw cuda::CudaError):
//  - launch_invalid_configuration: a kernel launched with more threads per block than any GPU
//    allows; the launch fails with cudaErrorInvalidConfiguration (an ordinary error: the context
//    stays usable), thrown at once;
//  - launch_illegal_address: a kernel that stores to an address no allocation maps; the next
//    synchronization fails with cudaErrorIllegalAddress, a sticky error: every later call in
//    that context fails too, and only destroying the context recovers the device for it;
//  - launch_gate: a one-thread kernel that spins until the host sets *open (mapped page-locked
//    memory) or `give_up_s` of device time pass, so that work behind it on the stream makes no
//    progress (a stalled copy) until the host opens the gate.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace zk::cuda {

void launch_invalid_configuration(cudaStream_t stream);
void launch_illegal_address(cudaStream_t stream);
void launch_gate(const volatile uint32_t* open, double give_up_s, cudaStream_t stream);

}  // namespace zk::cuda
