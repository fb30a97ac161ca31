// faulty_cuda_backend.cpp — the fault-injecting CUDA backend (contract in faulty_cuda_backend.hpp).
#include "engine/pipeline/faulty_cuda_backend.hpp"

#include <fmt/format.h>

#ifdef ZKPIPE_HAVE_CUDA
#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "engine/groth16/cuda_backend.hpp"
#include "engine/pipeline/host_memory.hpp"
#include "kernels/util/cuda_check.hpp"
#include "kernels/util/fault_kernels.cuh"
#endif

namespace zk::pipeline {

#ifdef ZKPIPE_HAVE_CUDA
namespace {

using zkpipe::faults::FaultInjector;
using zkpipe::faults::TransferFault;
using groth16::Fr;

// The driver calls a context of one's own takes, found through the runtime, so that binaries need
// no libcuda to start (CI has none); the versions are these calls' first.
struct Driver {
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuCtxCreate_v3020 create;
  PFN_cuCtxDestroy_v4000 destroy;
  PFN_cuCtxPushCurrent_v4000 push;
  PFN_cuCtxPopCurrent_v4000 pop;
  PFN_cuGetErrorName_v6000 error_name;

  static const Driver& get() {
    static const Driver driver{entry<PFN_cuDeviceGet_v2000>("cuDeviceGet"), entry<PFN_cuCtxCreate_v3020>("cuCtxCreate"),
                               entry<PFN_cuCtxDestroy_v4000>("cuCtxDestroy"),
                               entry<PFN_cuCtxPushCurrent_v4000>("cuCtxPushCurrent"),
                               entry<PFN_cuCtxPopCurrent_v4000>("cuCtxPopCurrent"),
                               entry<PFN_cuGetErrorName_v6000>("cuGetErrorName")};
    return driver;
  }
  void check(CUresult status, const char* call) const {
    if (status == CUDA_SUCCESS) return;
    const char* name = "unknown error";
    error_name(status, &name);
    throw cuda::CudaError(fmt::format("CUDA driver call failed: {}: {}", call, name));
  }

 private:
  template <class Function>
  static Function entry(const char* symbol) {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_OK(cudaGetDriverEntryPointByVersion(symbol, &function, 6000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !function) fail("cuda: the driver offers no {}", symbol);
    return reinterpret_cast<Function>(function);
  }
};

// A CUDA context of the worker's own on one device, current to the calling thread while a Scope
// lives; destroy() frees everything allocated in it.
class WorkerContext {
 public:
  explicit WorkerContext(int gpu) {
    const Driver& driver = Driver::get();
    CUdevice device{};
    driver.check(driver.device_get(&device, gpu), "cuDeviceGet");
    driver.check(driver.create(&context_, CU_CTX_SCHED_BLOCKING_SYNC, device), "cuCtxCreate");  // waits sleep
    CUcontext created{};
    driver.check(driver.pop(&created), "cuCtxPopCurrent");  // cuCtxCreate made it current
  }
  WorkerContext(const WorkerContext&) = delete;
  WorkerContext& operator=(const WorkerContext&) = delete;
  ~WorkerContext() { destroy(); }
  void destroy() noexcept {
    if (context_) Driver::get().destroy(std::exchange(context_, nullptr));
  }

  class Scope {
   public:
    explicit Scope(CUcontext context) { Driver::get().check(Driver::get().push(context), "cuCtxPushCurrent"); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() {
      CUcontext popped{};
      Driver::get().pop(&popped);
    }
  };
  Scope enter() const { return Scope(context_); }

 private:
  CUcontext context_ = nullptr;
};

class FaultyCudaBackend final : public FaultInjectingBackend {
 public:
  FaultyCudaBackend(FaultInjector& faults, uint32_t worker, int gpu) : faults_(faults), worker_(worker), context_(gpu) {
    const auto scope = context_.enter();
    gate_ = cuda::PinnedHostBuffer<uint32_t>(1);  // mapped: with unified addressing kernels read it
    inner_ = std::make_unique<groth16::CudaBackend>();
    inner_->set_copy_watchdog({faults.options().stalled_transfer_s,
                               [this](CUstream_st* stream) { stall_if_asked(stream); },
                               [this] { std::atomic_ref<uint32_t>(*gate_.get()).store(1); }});
  }
  FaultyCudaBackend(const FaultyCudaBackend&) = delete;
  FaultyCudaBackend& operator=(const FaultyCudaBackend&) = delete;
  ~FaultyCudaBackend() override { tear_down(); }

  void begin_attempt(uint32_t partition, uint32_t attempt) override { attempt_ = Attempt{partition, attempt}; }
  std::string name() const override { return "faulty-cuda"; }

  std::string prepare(const groth16::ProvingKey& pk, std::span<const zkpipe::policy::FixedBaseTable> fixed_bases) override {
    return on_device("prepare", [&] { return inner_->prepare(pk, fixed_bases); });
  }
  std::string reserve_witness_staging(const groth16::ProvingKey& pk, groth16::WitnessHostMemory from) override {
    return on_device("reserve witness staging", [&] { return inner_->reserve_witness_staging(pk, from); });
  }
  // The CUDA backend's, but every worker's context holds a key and workspaces of its own (and no
  // fixed-base table: none is offered).
  zkpipe::policy::DeviceFootprint device_footprint(const groth16::ProvingKey& pk,
                                                  const groth16::MsmScalarCounts& scalars) const override {
    const zkpipe::policy::DeviceFootprint cuda = inner_->device_footprint(pk, scalars);
    return {0, 0, cuda.key_bytes + cuda.shared_bytes + cuda.worker_bytes, cuda.streaming_bytes, {}};
  }
  void quotient_evaluations(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, const ntt::Domain& domain) override {
    on_device("quotient", [&] { inner_->quotient_evaluations(a, b, c, domain); });
  }
  void stage_quotient_inputs(std::span<const Fr> a, std::span<const Fr> b, std::span<const Fr> c) override {
    on_device("copy", [&] {
      if (attempt_ && faults_.device_allocation_fails(attempt_->partition, attempt_->attempt))
        inject("device allocation failure", [] { cuda::DeviceBuffer<uint8_t> workspace(size_t{1} << 50); });
      stall_next_copy_ =
          attempt_ && faults_.transfer_fault(attempt_->partition, attempt_->attempt) == TransferFault::stalled;
      inner_->stage_quotient_inputs(a, b, c);
      if (attempt_ && faults_.worker_dies(worker_, attempt_->partition, attempt_->attempt))
        inject("illegal address", [] {
          cuda::launch_illegal_address(nullptr);
          CUDA_OK(cudaStreamSynchronize(nullptr));
        });
    });
  }
  void staged_quotient_evaluations(const ntt::Domain& domain) override {
    throw_if_lost("quotient");
    if (attempt_ && faults_.device_resets(worker_, attempt_->partition, attempt_->attempt))
      lose(fmt::format("{}: injected device reset: the worker's CUDA context was destroyed under it", where()));
    on_device("quotient", [&] {
      if (attempt_ && !std::exchange(attempt_->kernel_error_asked, true) &&
          faults_.gpu_error(attempt_->partition, attempt_->attempt))
        inject("kernel error", [] { cuda::launch_invalid_configuration(nullptr); });
      inner_->staged_quotient_evaluations(domain);
    });
  }
  groth16::G1 staged_quotient_msm(std::span<const groth16::G1Affine> bases) override {
    return on_device("msm H", [&] { return inner_->staged_quotient_msm(bases); });
  }
  groth16::StagedWitness stage_witness(const groth16::ProofSplits& splits, groth16::WitnessHostMemory from) override {
    return on_device("witness copy", [&] {
      inner_witness_.reset();
      inner_witness_.emplace(inner_->stage_witness(splits, from));
      return groth16::StagedWitness(this, ++staging_, inner_witness_->h2d_bytes());
    });
  }
  groth16::G1 msm(std::span<const groth16::G1Affine> bases, std::span<const uint32_t> indices,
                  std::span<const Fr> scalars) override {
    return on_device("msm G1", [&] { return inner_->msm(bases, indices, scalars); });
  }
  groth16::G2 msm(std::span<const groth16::G2Affine> bases, std::span<const uint32_t> indices,
                  std::span<const Fr> scalars) override {
    return on_device("msm G2", [&] { return inner_->msm(bases, indices, scalars); });
  }
  groth16::G1 sum(std::span<const groth16::G1Affine> bases, std::span<const uint32_t> indices) override {
    return on_device("batch addition G1", [&] { return inner_->sum(bases, indices); });
  }
  groth16::G2 sum(std::span<const groth16::G2Affine> bases, std::span<const uint32_t> indices) override {
    return on_device("batch addition G2", [&] { return inner_->sum(bases, indices); });
  }
  std::vector<groth16::BackendCopy> take_copies() override {
    return inner_ ? inner_->take_copies() : std::vector<groth16::BackendCopy>{};
  }

 private:
  struct Attempt {
    uint32_t partition = 0, attempt = 0;
    bool kernel_error_asked = false;
  };

  // The staged witness handed out is this backend's, so that it outlives a torn-down inner one.
  void release_staged_witness(uint64_t staging) noexcept override {
    if (staging == staging_) inner_witness_.reset();
  }

  // `call` in the worker's context. An error that leaves the context sticky loses the worker;
  // any other travels on.
  template <class Call>
  std::invoke_result_t<Call&> on_device(const char* site, Call&& call) {
    throw_if_lost(site);
    std::string sticky_error;
    {
      const auto scope = context_.enter();
      try {
        return call();
      } catch (const std::exception& e) {
        if (!cuda_device_lost()) throw;  // clears an ordinary error, so that no later check sees it
        sticky_error = e.what();
      }
    }
    lose(fmt::format("{}: {} left the worker's CUDA context unusable (a sticky error): {}", where(), site, sticky_error));
  }

  // Runs an injected fault's CUDA call, which fails; rethrows its error as the injected fault.
  template <class Call>
  void inject(const char* fault, Call&& call) {
    try {
      call();
    } catch (const std::exception& e) {
      throw DeviceError(fmt::format("{}: injected {}: {}", where(), fault, e.what()));
    }
    throw std::logic_error(fmt::format("{}: the injected {} did not fail", where(), fault));
  }

  // Before a staging copy, on its stream: a closed gate ahead of it where this attempt stalls. The
  // gate gives up by itself well after the watchdog should have opened it, so that no bug can
  // hang the GPU.
  void stall_if_asked(CUstream_st* stream) {
    if (!std::exchange(stall_next_copy_, false)) return;
    std::atomic_ref<uint32_t>(*gate_.get()).store(0);
    cuda::launch_gate(gate_.get(), faults_.options().stalled_transfer_s + 60, stream);
  }

  [[noreturn]] void lose(std::string why) {
    tear_down();
    lost_ = std::move(why);
    throw DeviceLost(lost_);
  }
  void throw_if_lost(const char* site) const {
    if (!lost_.empty()) throw DeviceLost(fmt::format("{} on a lost device ({})", site, lost_));
  }
  // Frees what the worker holds on its device, then the context (its frees fail quietly where
  // the context is sticky; destroying it releases everything all the same).
  void tear_down() noexcept {
    if (!inner_) return;
    {
      const auto scope = context_.enter();
      inner_witness_.reset();
      inner_.reset();
      gate_ = {};
    }
    context_.destroy();
  }
  std::string where() const {
    const uint64_t seed = faults_.options().seed;
    if (!attempt_) return fmt::format("faulty-cuda worker {} (fault seed {})", worker_, seed);
    return fmt::format("faulty-cuda worker {}, partition {} attempt {} (fault seed {})", worker_, attempt_->partition,
                       attempt_->attempt, seed);
  }

  FaultInjector& faults_;
  uint32_t worker_;
  WorkerContext context_;
  cuda::PinnedHostBuffer<uint32_t> gate_;  // the stall's gate: 0 closed, 1 open
  std::unique_ptr<groth16::CudaBackend> inner_;
  std::optional<groth16::StagedWitness> inner_witness_;
  uint64_t staging_ = 0;
  std::optional<Attempt> attempt_;
  bool stall_next_copy_ = false;
  std::string lost_;  // why the device is lost; empty while it is not
};

}  // namespace

std::unique_ptr<FaultInjectingBackend> make_faulty_cuda_backend(zkpipe::faults::FaultInjector& faults, uint32_t worker,
                                                                int gpu) {
  if (cuda::cuda_device_count() == 0)
    fail("backend 'faulty-cuda': no CUDA device found (cudaGetDeviceCount reports none); use --backend fake");
  return std::make_unique<FaultyCudaBackend>(faults, worker, gpu);
}

#else

std::unique_ptr<FaultInjectingBackend> make_faulty_cuda_backend(zkpipe::faults::FaultInjector&, uint32_t, int) {
  fail("backend 'faulty-cuda' is not available in this build (no CUDA); use --backend fake");
}

#endif

}  // namespace zk::pipeline
