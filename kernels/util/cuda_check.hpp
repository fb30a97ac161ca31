// cuda_check.hpp — the one way zkpipe's CUDA code checks calls and owns device resources.
//
// CUDA_OK(expr) evaluates a CUDA runtime call and throws zk::cuda::CudaError carrying the expression,
// file, line and CUDA's message when it fails; CUDA_LAUNCH_OK() does the same for the last kernel
// launch. Kernels and launchers throw; the engine's backend lets the exception travel to the
// command line's main(), the one place where it becomes a message and an exit status.
//
// RAII: DeviceBuffer<T> (cudaMalloc/cudaFree, move-only, size in elements), PinnedHostBuffer<T>
// (cudaHostAlloc/cudaFreeHost, likewise), CudaStream, CudaEvent.
// Destructors never throw (a failing free at teardown is reported by the next checked call).
// cuda_device_count() returns 0 instead of throwing when the driver finds no device, so tests and
// make_backend() can say "no CUDA device found" cleanly.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace zk::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* expression, const char* file,
                                          int line) {
  throw CudaError(std::string("CUDA call failed: ") + expression + " at " + file + ":" +
                  std::to_string(line) + ": " + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ")");
}

#define CUDA_OK(expr)                                                                    \
  do {                                                                                   \
    cudaError_t zk_cuda_status_ = (expr);                                                \
    if (zk_cuda_status_ != cudaSuccess)                                                  \
      ::zk::cuda::throw_cuda_error(zk_cuda_status_, #expr, __FILE__, __LINE__);          \
  } while (0)
#define CUDA_LAUNCH_OK() CUDA_OK(cudaGetLastError())

// Number of CUDA devices, 0 when there is no driver, no device, or the runtime cannot start.
inline int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" status
    return 0;
  }
  return count;
}

// Blocks of `threads` threads that cover `items`, one a thread.
constexpr size_t blocks_for(size_t items, size_t threads) { return (items + threads - 1) / threads; }

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count) CUDA_OK(cudaMalloc(&data_, count * sizeof(T)));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  T* get() const { return data_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }
  // Grows (never shrinks) to hold at least `count` elements; contents are not kept.
  void reserve(size_t count) {
    if (count > count_) *this = DeviceBuffer(count);
  }
  void upload(std::span<const T> host, cudaStream_t stream, size_t offset = 0) {
    if (offset + host.size() > count_) throw CudaError("DeviceBuffer::upload: more elements than the buffer holds");
    if (!host.empty())
      CUDA_OK(cudaMemcpyAsync(data_ + offset, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream));
  }
  void download(std::span<T> host, cudaStream_t stream, size_t offset = 0) const {
    if (offset + host.size() > count_) throw CudaError("DeviceBuffer::download: more elements than the buffer holds");
    if (!host.empty())
      CUDA_OK(cudaMemcpyAsync(host.data(), data_ + offset, host.size_bytes(), cudaMemcpyDeviceToHost, stream));
  }
  // Its first `count` elements on the host, once `stream`'s work so far is done.
  std::vector<T> to_host(cudaStream_t stream, size_t count) const {
    std::vector<T> host(count);
    download(host, stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    return host;
  }

 private:
  void release() noexcept {
    if (data_) cudaFree(data_);
    data_ = nullptr;
    count_ = 0;
  }
  T* data_ = nullptr;
  size_t count_ = 0;
};

// Page-locked host memory, which the copy engines read at the link's rate. cudaHostAlloc is slow
// (4 GiB took 1.5 s on the H200 host): allocate once, when the sizes are known, and reuse.
// Move-only (the block is a unique_ptr's); size in elements.
template <class T>
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  explicit PinnedHostBuffer(size_t count) : count_(count) {
    T* data = nullptr;
    if (count) CUDA_OK(cudaHostAlloc(reinterpret_cast<void**>(&data), count * sizeof(T), cudaHostAllocDefault));
    data_.reset(data);
  }
  PinnedHostBuffer(PinnedHostBuffer&& o) noexcept : data_(std::move(o.data_)), count_(std::exchange(o.count_, 0)) {}
  PinnedHostBuffer& operator=(PinnedHostBuffer&& o) noexcept {
    data_ = std::move(o.data_);
    count_ = std::exchange(o.count_, 0);
    return *this;
  }

  T* get() const { return data_.get(); }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }
  // Grows (never shrinks) to hold at least `count` elements; contents are not kept. The old block
  // is freed first, so growing never holds both.
  void reserve(size_t count) {
    if (count <= count_) return;
    data_.reset();
    count_ = 0;
    *this = PinnedHostBuffer(count);
  }

 private:
  struct FreeHost {
    void operator()(T* p) const noexcept { cudaFreeHost(p); }
  };
  std::unique_ptr<T, FreeHost> data_;
  size_t count_ = 0;
};

class CudaStream {
 public:
  CudaStream() { CUDA_OK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  ~CudaStream() { cudaStreamDestroy(stream_); }
  cudaStream_t get() const { return stream_; }
  void synchronize() const { CUDA_OK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  CudaEvent() { CUDA_OK(cudaEventCreate(&event_)); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent() { cudaEventDestroy(event_); }
  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream) { CUDA_OK(cudaEventRecord(event_, stream)); }
  // Milliseconds from `start` to this event (both recorded; waits for this one).
  float elapsed_ms_since(const CudaEvent& start) const {
    CUDA_OK(cudaEventSynchronize(event_));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace zk::cuda
