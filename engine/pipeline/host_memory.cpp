#include "engine/pipeline/host_memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <utility>

#include <fmt/format.h>
#ifdef ZKPIPE_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "engine/util/error.hpp"

namespace zk::pipeline {

int cuda_devices() {
#ifdef ZKPIPE_HAVE_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the "no device" status
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

void use_cuda_device(int gpu) {
#ifdef ZKPIPE_HAVE_CUDA
  if (cuda_devices() == 0) return;
  if (cudaError_t status = cudaSetDevice(gpu); status != cudaSuccess)
    fail("cudaSetDevice({}) failed: {}", gpu, cudaGetErrorString(status));
#else
  (void)gpu;
#endif
}

uint64_t cuda_free_device_bytes(uint32_t gpus) {
  uint64_t smallest = 0;
#ifdef ZKPIPE_HAVE_CUDA
  if (cuda_devices() == 0) return 0;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) fail("cudaGetDevice failed");
  for (uint32_t gpu = 0; gpu < gpus; ++gpu) {
    use_cuda_device(int(gpu));
    size_t free = 0, total = 0;
    if (cudaError_t status = cudaMemGetInfo(&free, &total); status != cudaSuccess)
      fail("cudaMemGetInfo on device {} failed: {}", gpu, cudaGetErrorString(status));
    smallest = gpu == 0 ? free : std::min<uint64_t>(smallest, free);
  }
  use_cuda_device(current);
#else
  (void)gpus;
#endif
  return smallest;
}

bool cuda_device_lost() {
#ifdef ZKPIPE_HAVE_CUDA
  // A sticky error is returned by every later synchronization; an ordinary one is cleared here.
  (void)cudaGetLastError();
  return cudaDeviceSynchronize() != cudaSuccess;
#else
  return false;
#endif
}

HostBlock HostBlock::pageable(size_t bytes) {
  constexpr size_t alignment = 64;
  void* data = bytes ? std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment) : nullptr;
  if (bytes && !data) throw std::bad_alloc();
  return HostBlock(data, bytes, Kind::pageable);
}

bool HostBlock::pinning_available(std::string* why) {
#ifdef ZKPIPE_HAVE_CUDA
  if (cuda_devices() > 0) return true;
  if (why) *why = "no CUDA device found";
#else
  if (why) *why = "this build has no CUDA (configured with ZKPIPE_CUDA=OFF or without nvcc)";
#endif
  return false;
}

std::optional<HostBlock> HostBlock::try_pinned(size_t bytes, std::string& why) {
  if (!pinning_available(&why)) return std::nullopt;
#ifdef ZKPIPE_HAVE_CUDA
  void* data = nullptr;
  if (cudaError_t status = cudaHostAlloc(&data, bytes, cudaHostAllocPortable); status != cudaSuccess) {
    (void)cudaGetLastError();
    why = fmt::format("cudaHostAlloc of {} bytes failed: {}", bytes, cudaGetErrorString(status));
    return std::nullopt;
  }
  return HostBlock(data, bytes, Kind::pinned);
#else
  (void)bytes;
  return std::nullopt;
#endif
}

void HostBlock::Free::operator()(void* data) const noexcept {
#ifdef ZKPIPE_HAVE_CUDA
  if (kind == Kind::pinned) {
    cudaFreeHost(data);
    return;
  }
#endif
  std::free(data);
}

HostRegistration::HostRegistration(const void* data, size_t bytes) {
#ifdef ZKPIPE_HAVE_CUDA
  if (bytes == 0 || cuda_devices() == 0) return;
  if (cudaHostRegister(const_cast<void*>(data), bytes, cudaHostRegisterPortable) == cudaSuccess)
    data_ = const_cast<void*>(data);
  else
    (void)cudaGetLastError();
#else
  (void)data, (void)bytes;
#endif
}

HostRegistration::~HostRegistration() {
#ifdef ZKPIPE_HAVE_CUDA
  if (data_) cudaHostUnregister(data_);
#endif
}

}  // namespace zk::pipeline
