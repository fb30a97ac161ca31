// host_memory.hpp — host memory for a/b/c staging, and the few CUDA runtime facts the engine
// needs. A HostBlock is page-locked (cudaHostAlloc, so the GPU's copy engines read it directly
// at link speed) when this build has CUDA and a device is present, else ordinary 64-byte-aligned
// memory that says so: kind() is `pageable` and the copy path is the driver's bounce buffer.
// RAII and move-only; the memory is not initialized. A HostRegistration page-locks memory that
// already exists (cudaHostRegister: fast for touched memory, 23 ms for 512 MiB on the H200) for
// its lifetime, where CUDA and a device are present. cuda_devices() is 0 in a build without CUDA
// or on a machine without a device; use_cuda_device() selects the calling thread's device;
// cuda_free_device_bytes() is what the device-memory budget's default starts from;
// cuda_device_lost() says whether the calling thread's device hit a sticky error (illegal
// address, launch failure, ECC...), after which its context is unusable.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "kernels/ff/bls12-381.hpp"

namespace zk::pipeline {

int cuda_devices();
void use_cuda_device(int gpu);
// The smallest free memory (cudaMemGetInfo) of devices 0..gpus-1 now; 0 without CUDA or a device.
uint64_t cuda_free_device_bytes(uint32_t gpus);
bool cuda_device_lost();

class HostBlock {
 public:
  enum class Kind { pinned, pageable };

  static HostBlock pageable(size_t bytes);
  // Page-locked memory, or nullopt with the reason in `why`: pinning_available() is false (no
  // CUDA in this build, or no device), or cudaHostAlloc refused.
  static std::optional<HostBlock> try_pinned(size_t bytes, std::string& why);
  // Whether this process can page-lock memory at all; the reason when it cannot.
  static bool pinning_available(std::string* why = nullptr);

  Kind kind() const { return data_.get_deleter().kind; }
  size_t bytes() const { return data_ ? bytes_ : 0; }
  // The block as field elements (bytes() / sizeof(Fr) of them).
  std::span<bls12_381::Fr> elements() const {
    return {static_cast<bls12_381::Fr*>(data_.get()), bytes() / sizeof(bls12_381::Fr)};
  }

 private:
  struct Free {  // cudaFreeHost for pinned memory, else std::free
    Kind kind;
    void operator()(void* data) const noexcept;
  };
  HostBlock(void* data, size_t bytes, Kind kind) : data_(data, Free{kind}), bytes_(bytes) {}
  std::unique_ptr<void, Free> data_;
  size_t bytes_ = 0;
};

class HostRegistration {
 public:
  HostRegistration(const void* data, size_t bytes);
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;
  ~HostRegistration();
  bool registered() const { return data_ != nullptr; }

 private:
  void* data_ = nullptr;
};

}  // namespace zk::pipeline
