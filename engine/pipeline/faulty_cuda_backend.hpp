// faulty_cuda_backend.hpp — the real CUDA backend (groth16::CudaBackend) with faults injected at
// real CUDA points, drawn from the job's faults::FaultInjector with the fake device's keys
// (fake_backend.hpp), so that a seed replays the same faults on either. Its proofs are the CUDA
// backend's own. Each worker's backend runs in a CUDA context of its own (cuCtxCreate), pushed
// for each call, so that a reset of one worker's context leaves the others'. (A sticky error does
// not stay in its context: on the H200, driver 580.159.04, an illegal address in one worker's
// context made every context of the process return it, so every worker there is lost.) The faults:
//  - kernel error (gpu_error, per partition and attempt): at the attempt's first kernel call
//    (the quotient), a kernel launched with 4096 threads per block fails with
//    cudaErrorInvalidConfiguration, an ordinary error: DeviceError, the attempt is retried;
//  - failed device allocation (device_allocation_failure, per partition and attempt): at the
//    attempt's copy, a cudaMalloc of 1 PiB fails with cudaErrorMemoryAllocation: retried;
//  - stalled copy (stalled_transfer, per partition and attempt): the staging copy of a, b, c is
//    enqueued behind a kernel that spins until the host opens its gate, so it makes no progress;
//    the backend's copy watchdog (CopyWatchdog, armed with stalled_transfer_s for every copy)
//    fires, opens the gate, waits for the copy to drain and throws CopyStalled: retried;
//  - sticky error (worker_death, per worker, partition and attempt): at the end of the copy, a
//    kernel stores to an unmapped address: cudaErrorIllegalAddress, after which every call in the
//    context fails (in every context of the process, as seen on the H200); the context is torn
//    down and DeviceLost thrown: the worker is retired, its partition requeued without charging a
//    retry, and every other worker whose context reports the error follows;
//  - device reset (device_reset, per worker, partition and attempt): at the attempt's first kernel
//    call, the worker's context is destroyed under it with everything it held on the GPU (device
//    buffers, streams, its pinned witness buffer: cuCtxDestroy, what cudaDeviceReset does to a
//    process's primary context; cudaDeviceReset itself would also free the engine's pinned pool
//    that other threads are writing, so the reset is confined to the worker's context): DeviceLost.
// A CUDA error in any call that leaves the context sticky (injected or not) loses the worker the
// same way; any other error travels as it came (a cuda::CudaError naming the call). A refused
// pinned pool (pinned_allocation_failure) is the engine's, where it allocates the pool: a real
// cudaHostAlloc of an impossible size is refused (pinned_pool.hpp). Slow copies and wrong results
// are the fake device's alone (settings refuse them here). Each site is asked at most once per
// attempt, so the injector's counts are the faults injected. Not thread-safe (one per worker).
#pragma once
#include <cstdint>
#include <memory>

#include "engine/pipeline/fault_injecting_backend.hpp"
#include "faults/fault_injector.hpp"

namespace zk::pipeline {

// The backend of `worker` on CUDA device `gpu`; `faults` (the job's, shared by its workers) must
// outlive it. Throws zk::Error where this build has no CUDA or no device is present.
std::unique_ptr<FaultInjectingBackend> make_faulty_cuda_backend(zkpipe::faults::FaultInjector& faults, uint32_t worker,
                                                                int gpu);

}  // namespace zk::pipeline
