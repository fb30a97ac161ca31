// cuda_backend.cpp — the CUDA prover backend (contract in cuda_backend.hpp). Host code only (g++):
// the device code lives in kernels/ (zkpipe_kernels_cuda), whose launchers it calls.
#include "engine/groth16/cuda_backend.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/util/error.hpp"
#include "kernels/msm/pippenger_cuda.cuh"
#include "kernels/ntt/ntt_cuda.cuh"
#include "kernels/util/cuda_check.hpp"
#include "kernels/util/default_init.hpp"
#include "kernels/util/parallel.hpp"

namespace zk::groth16 {
namespace {

double mib(size_t bytes) { return double(bytes) / double(1 << 20); }

// The calling thread's CUDA context, where the backend's buffers live: the device's primary
// context, or a worker's own (faulty-cuda's). Device memory is shared within a context, so the key
// and workspaces below are one per context (per device, for the engine's CUDA workers). Found
// through the runtime, so that binaries need no libcuda to start.
const void* current_context() {
  static const auto get_current = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_OK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 4000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !function) fail("cuda: the driver offers no cuCtxGetCurrent");
    return reinterpret_cast<CUresult (*)(CUcontext*)>(function);
  }();
  CUDA_OK(cudaFree(nullptr));  // the runtime makes the device's primary context current where none is
  CUcontext context = nullptr;
  if (get_current(&context) != CUDA_SUCCESS || !context) fail("cuda: no current CUDA context");
  return context;
}

template <class Affine>
using CurveOf = std::conditional_t<std::is_same_v<Affine, G1Affine>, bls12_381::G1Curve, bls12_381::G2Curve>;
using zkpipe::policy::FixedBaseTable;
using zkpipe::policy::KeyArray;

// A proving key's point arrays on one device, found by host address and length: one copy per
// context (device) and key, shared by the backends there that prepared it. An array asked for
// with a fixed-base table is held as that table, whose first row is the array.
class DeviceKey {
 public:
  // The copy in the current context of `pk`'s points, uploaded (and its tables built) by the
  // first backend to ask and freed with the last that holds it; `uploaded` says whether this
  // call made it.
  static std::shared_ptr<const DeviceKey> of(const ProvingKey& pk, std::span<const FixedBaseTable> fixed_bases,
                                             cudaStream_t stream, bool& uploaded) {
    static std::mutex mutex;
    static std::map<std::pair<const void*, const ProvingKey*>, std::weak_ptr<const DeviceKey>> keys;
    const void* context = current_context();
    std::lock_guard lock(mutex);
    std::weak_ptr<const DeviceKey>& entry = keys[{context, &pk}];
    uploaded = entry.expired();
    if (!uploaded) return entry.lock();
    auto key = std::make_shared<DeviceKey>();
    const auto table_sets = [&](KeyArray array) {  // 0: no table
      const auto table = std::ranges::find(fixed_bases, array, &FixedBaseTable::array);
      return table == fixed_bases.end() ? 0 : int(table->sets);
    };
    const std::pair<KeyArray, const std::vector<G1Affine>*> g1_arrays[] = {
        {KeyArray::a, &pk.a}, {KeyArray::b1, &pk.b1}, {KeyArray::l, &pk.l}, {KeyArray::h, &pk.h}};
    for (const auto& [array, points] : g1_arrays) key->keep(key->g1_, std::span<const G1Affine>(*points), table_sets(array), stream);
    key->keep(key->g2_, std::span<const G2Affine>(pk.b2), table_sets(KeyArray::b2), stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    entry = key;
    return key;
  }

  // The device copy of `host` (a table's first row), or null.
  template <class Affine>
  const Affine* find(std::span<const Affine> host) const {
    const Copy<CurveOf<Affine>>* copy = copy_of(host);
    return !copy ? nullptr : copy->table ? copy->table->table() : copy->points.get();
  }
  // The fixed-base table of `host`, or null.
  template <class Affine>
  const msm::CudaFixedBases<CurveOf<Affine>>* table(std::span<const Affine> host) const {
    const Copy<CurveOf<Affine>>* copy = copy_of(host);
    return copy && copy->table ? &*copy->table : nullptr;
  }
  size_t bytes() const { return bytes_of(g1_, false) + bytes_of(g2_, false); }
  size_t table_bytes() const { return bytes_of(g1_, true) + bytes_of(g2_, true); }

 private:
  template <class Curve>
  struct Copy {
    cuda::DeviceBuffer<ec::affine_t<Curve>> points;    // where there is no table
    std::optional<msm::CudaFixedBases<Curve>> table;
  };
  template <class Curve>
  using Copies = std::map<std::pair<const void*, size_t>, Copy<Curve>>;
  template <class Curve>
  static void keep(Copies<Curve>& copies, std::span<const ec::affine_t<Curve>> host, int table_sets, cudaStream_t stream) {
    Copy<Curve>& copy = copies[{host.data(), host.size()}];
    copy.points = cuda::DeviceBuffer<ec::affine_t<Curve>>(host.size());
    copy.points.upload(host, stream);
    if (table_sets == 0) return;
    copy.table.emplace().build(copy.points.get(), host.size(), stream, 0, table_sets);  // returns once built
    copy.points = {};
  }
  template <class Affine>
  const Copy<CurveOf<Affine>>* copy_of(std::span<const Affine> host) const {
    const auto& copies = [this]() -> const Copies<CurveOf<Affine>>& {
      if constexpr (std::is_same_v<Affine, G1Affine>) return g1_;
      else return g2_;
    }();
    const auto it = copies.find({host.data(), host.size()});
    return it == copies.end() ? nullptr : &it->second;
  }
  // The bytes the copies hold on the device (only their tables').
  template <class Curve>
  static size_t bytes_of(const Copies<Curve>& copies, bool tables_only) {
    size_t total = 0;
    for (const auto& [k, copy] : copies) total += copy.table ? copy.table->bytes() : tables_only ? 0 : copy.points.bytes();
    return total;
  }
  Copies<bls12_381::G1Curve> g1_;
  Copies<bls12_381::G2Curve> g2_;
};

// Bases of an MSM or a sum on the device: the prepared key's where they are one of its arrays,
// else streamed through two chunk buffers, the copy of the next chunk (on its own stream:
// asynchronous where the host array is page-locked) overlapping the work on this one. Each
// chunk's copy is timed by events around it on the copy stream and kept (take_copies()).
template <class Affine>
class DeviceBases {
 public:
  explicit DeviceBases(size_t chunk_points) : chunk_points_(chunk_points) {}
  size_t chunk_points() const { return chunk_points_; }

  void use(std::shared_ptr<const DeviceKey> key) { key_ = std::move(key); }
  // The prepared device copy of `host`, or null; its fixed-base table, or null.
  const Affine* find(std::span<const Affine> host) const { return key_ ? key_->find(host) : nullptr; }
  const msm::CudaFixedBases<CurveOf<Affine>>* table(std::span<const Affine> host) const {
    return key_ ? key_->table(host) : nullptr;
  }
  // work(d_chunk, begin, end) for every chunk [begin, end) of host[0, count), in order, each
  // called once its chunk is on the device; `compute` is the stream the work runs on, which
  // must be done with a buffer when work() returns (the MSM launchers return with the result).
  template <class Work>
  void for_each_chunk(std::span<const Affine> host, size_t count, cudaStream_t compute, Work&& work) {
    const size_t chunks = (count + chunk_points_ - 1) / chunk_points_;
    while (timing_.size() < 2 * chunks) timing_.emplace_back();
    // The copy stream is idle between calls: the epoch completes as it is recorded.
    epoch_.record(copy_.get());
    CUDA_OK(cudaEventSynchronize(epoch_.get()));
    const auto epoch = std::chrono::steady_clock::now();
    auto upload = [&](size_t chunk) {
      const size_t begin = chunk * chunk_points_, size = std::min(chunk_points_, count - begin);
      auto& buffer = buffers_[chunk % 2];
      buffer.reserve(size);
      timing_[2 * chunk].record(copy_.get());
      buffer.upload(host.subspan(begin, size), copy_.get());
      timing_[2 * chunk + 1].record(copy_.get());
      copied_[chunk % 2].record(copy_.get());
    };
    if (chunks) upload(0);
    for (size_t chunk = 0; chunk < chunks; ++chunk) {
      if (chunk + 1 < chunks) upload(chunk + 1);  // into the buffer the previous chunk's work is done with
      CUDA_OK(cudaStreamWaitEvent(compute, copied_[chunk % 2].get(), 0));
      const size_t begin = chunk * chunk_points_;
      work(static_cast<const Affine*>(buffers_[chunk % 2].get()), begin, std::min(count, begin + chunk_points_));
    }
    auto at = [&](const cuda::CudaEvent& event) {
      return epoch + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double, std::milli>(event.elapsed_ms_since(epoch_)));
    };
    for (size_t chunk = 0; chunk < chunks; ++chunk)
      copies_.push_back({at(timing_[2 * chunk]), at(timing_[2 * chunk + 1]),
                         std::min(chunk_points_, count - chunk * chunk_points_) * sizeof(Affine)});
  }
  std::vector<BackendCopy> take_copies() { return std::exchange(copies_, {}); }

 private:
  size_t chunk_points_;
  std::shared_ptr<const DeviceKey> key_;
  cuda::CudaStream copy_;
  cuda::DeviceBuffer<Affine> buffers_[2];
  cuda::CudaEvent copied_[2];
  cuda::CudaEvent epoch_;
  std::deque<cuda::CudaEvent> timing_;  // each chunk's copy: its start and its end
  std::vector<BackendCopy> copies_;
};

// The kernels' workspaces in one context (device), shared by the backends there: the NTT's tables and
// scratch, the MSMs' buckets, the digits of a staged witness. Each kernel call holds `busy` (the
// engine's compute section already keeps one device's calls apart, so there it never waits).
struct DeviceCompute {
  static std::shared_ptr<DeviceCompute> of_current_context() {
    static std::mutex mutex;
    static std::map<const void*, std::weak_ptr<DeviceCompute>> contexts;
    const void* context = current_context();
    std::lock_guard lock(mutex);
    std::shared_ptr<DeviceCompute> compute = contexts[context].lock();
    if (!compute) contexts[context] = compute = std::make_shared<DeviceCompute>();
    return compute;
  }

  std::mutex busy;
  ntt::CudaNtt ntt;
  msm::CudaMsm<bls12_381::G1Curve> g1;
  msm::CudaMsm<bls12_381::G2Curve> g2;
  // The staged witness's digits in each layout its MSMs read: per window (arrays without a table)
  // and over tables (the plan gives the tables of a, b1 and b2 one number of sets), so A, B1 and B2
  // decompose a split at most once a layout in the prover's order (A, then B1 and B2 on the same
  // split or on the B split); each names the staging and the split's scalars it was computed for
  // (staging numbers are unique in the process; 0: none).
  struct WitnessDigits {
    msm::CudaMsmDigits digits;
    uint64_t of_staging = 0;
    const Fr* of_scalars = nullptr;
  };
  WitnessDigits witness_digits[2];  // [layout.over_table()]

  // Allocates now every workspace `pk`'s proofs take over `key` (its tables where it has them),
  // the sizes the device-memory plan counts, so that no kernel call allocates inside the compute
  // section: an allocation waits for all of the device's work, another worker's copies included.
  void reserve(const ProvingKey& pk, const DeviceKey& key, cudaStream_t stream) {
    std::lock_guard lock(busy);
    ntt.reserve_quotient(ntt::Domain(int(pk.lg_domain)), stream);
    g1.reserve(std::max<size_t>(pk.domain_size(), pk.num_vars), true);
    g2.reserve(pk.num_vars, false);
    witness_digits[0].digits.reserve(pk.num_vars);
    const auto over_table = [&](auto& msm, const auto* table) {
      if (!table) return;
      const msm::DigitLayout layout = msm::DigitLayout::fixed_base(table->sets());
      msm.reserve(table->n(), true, table->window_bits(), layout);
      witness_digits[1].digits.reserve(pk.num_vars, table->window_bits(), layout);
    };
    for (const auto* points : {&pk.a, &pk.b1, &pk.l, &pk.h})
      over_table(g1, key.table(std::span<const G1Affine>(*points)));
    over_table(g2, key.table(std::span<const G2Affine>(pk.b2)));
    CUDA_OK(cudaStreamSynchronize(stream));
  }
};

// memcpy spread over the cores this thread may use.
void copy_on_every_core(void* destination, const void* source, size_t bytes) {
  constexpr size_t chunk_bytes = size_t{1} << 20;
  parallel_for((bytes + chunk_bytes - 1) / chunk_bytes, [&](size_t begin, size_t end) {
    const size_t offset = begin * chunk_bytes;
    std::memcpy(static_cast<uint8_t*>(destination) + offset, static_cast<const uint8_t*>(source) + offset,
                std::min(end * chunk_bytes, bytes) - offset);
  });
}

// A copy's watchdog: on its own thread, so that it fires while the copy blocks its caller (a copy
// from pageable memory can): unless finish() comes within `timeout_s`, it marks the copy stalled
// and calls `on_stall` (when set) once.
class CopyWatch {
 public:
  CopyWatch(double timeout_s, const std::function<void()>& on_stall)
      : thread_([this, timeout_s, &on_stall] {
          std::unique_lock lock(mutex_);
          if (finished_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return done_; })) return;
          stalled_ = true;
          lock.unlock();
          if (on_stall) on_stall();
        }) {}
  CopyWatch(const CopyWatch&) = delete;
  CopyWatch& operator=(const CopyWatch&) = delete;
  ~CopyWatch() { finish(); }
  // Stops the watch; whether the copy finished in time.
  bool finish() {
    if (thread_.joinable()) {
      {
        std::lock_guard lock(mutex_);
        done_ = true;
      }
      finished_.notify_one();
      thread_.join();
    }
    return !stalled_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false, stalled_ = false;
  std::thread thread_;  // last: it starts once the members above exist
};

template <class T, class Vector>
bool same_array(std::span<const T> span, const Vector& vector) {
  return span.data() == vector.data() && span.size() == vector.size();
}

// One staged split: its host arrays (by which msm() and sum() calls on it are recognized) and
// their device copies, at the same offsets in the device's block as in the host's.
struct StagedSplit {
  std::span<const Fr> scalars;
  std::span<const uint32_t> significant, ones;
  const Fr* d_scalars = nullptr;
  const uint32_t *d_significant = nullptr, *d_ones = nullptr;

  StagedSplit() = default;
  StagedSplit(const WitnessSplit& split, const std::byte* host_block, const uint8_t* d_block)
      : scalars(split.significant_scalars), significant(split.significant), ones(split.ones),
        d_scalars(on_device(split.significant_scalars.data(), host_block, d_block)),
        d_significant(on_device(split.significant.data(), host_block, d_block)),
        d_ones(on_device(split.ones.data(), host_block, d_block)) {}
  template <class T>
  static const T* on_device(const T* host, const std::byte* host_block, const uint8_t* d_block) {
    return reinterpret_cast<const T*>(d_block + (reinterpret_cast<const std::byte*>(host) - host_block));
  }
  bool holds(std::span<const uint32_t> indices, std::span<const Fr> host_scalars) const {
    return d_scalars && same_array(indices, significant) && same_array(host_scalars, scalars);
  }
  bool holds_ones(std::span<const uint32_t> indices) const { return d_ones && same_array(indices, ones); }
};

}  // namespace

struct CudaBackend::Impl {
  explicit Impl(size_t stream_chunk_points) : g1_bases(stream_chunk_points), g2_bases(stream_chunk_points) {}
  cuda::CudaStream stream;
  std::shared_ptr<DeviceCompute> compute = DeviceCompute::of_current_context();
  DeviceBases<G1Affine> g1_bases;
  DeviceBases<G2Affine> g2_bases;
  cuda::DeviceBuffer<Fr> scalars, quotient;  // quotient: a, b, c one after the other
  size_t staged_n = 0;                        // elements of each staged quotient input
  size_t quotient_n = 0;                      // elements of the computed quotient (in its first n)
  cuda::DeviceBuffer<uint32_t> index;
  // The staged witness (stage_witness()): the pinned host buffer its splits are copied into, its
  // device copy, the copy's stream, the three splits (all, b, priv: empty when none is staged;
  // b may be all's arrays), and its number, unique in the process (the digits in `compute` name it).
  cuda::PinnedHostBuffer<uint8_t> witness_host;
  UninitializedVector<std::byte> witness_pageable;  // the splits' block where they stage from pageable memory
  std::span<std::byte> split_block;                 // the block of the last reserve_witness_staging()
  cuda::DeviceBuffer<uint8_t> witness_device;
  cuda::CudaStream witness_copy;
  std::array<StagedSplit, 3> staged;
  static constexpr size_t kSharedDigitSplits = 2;  // all and b: the splits of more than one MSM
  uint64_t staging = 0;
  static inline std::atomic<uint64_t> stagings{0};
  CopyWatchdog copy_watchdog;

  const uint32_t* upload_index(std::span<const uint32_t> indices) {
    if (indices.empty()) return nullptr;
    index.reserve(indices.size());
    index.upload(indices, stream.get());
    return index.get();
  }
  const Fr* upload_scalars(std::span<const Fr> host) {
    scalars.reserve(host.size());
    scalars.upload(host, stream.get());
    return scalars.get();
  }
  // The sum over chunks of kernel(d_bases, d_index, first, n): the bases selected by `indices`
  // (host_bases[0, count) when empty) and the n scalar positions from `first`. On the prepared
  // copy in one call, with `d_indices` (the staged copy of `indices`) or else `indices` uploaded;
  // on streamed bases chunk by chunk, the index list cut at the chunk's bounds (indices
  // ascending, as the witness split makes them) and rebased to its first point.
  template <class Curve, class Bases, class Kernel>
  ec::jacobian_t<Curve> over_bases(Bases& bases, std::span<const ec::affine_t<Curve>> host_bases,
                                   std::span<const uint32_t> indices, const uint32_t* d_indices, size_t count,
                                   Kernel&& kernel) {
    using Affine = ec::affine_t<Curve>;
    if (const Affine* d_bases = bases.find(host_bases))
      return kernel(d_bases, d_indices ? d_indices : upload_index(indices), size_t{0},
                    indices.empty() ? count : indices.size());
    if (!std::ranges::is_sorted(indices)) fail("cuda msm: bases streamed from the host need ascending indices");
    const size_t extent = indices.empty() ? count : size_t{indices.back()} + 1;
    if (extent > host_bases.size()) fail("cuda msm: base {} of {} selected", extent - 1, host_bases.size());
    ec::jacobian_t<Curve> total = ec::jacobian_t<Curve>::infinity();
    std::vector<uint32_t> rebased;
    bases.for_each_chunk(host_bases, extent, stream.get(), [&](const Affine* d_chunk, size_t begin, size_t end) {
      if (indices.empty()) {
        total = total + kernel(d_chunk, nullptr, begin, end - begin);
        return;
      }
      const auto lo = std::ranges::lower_bound(indices, begin) - indices.begin();
      const auto hi = std::ranges::lower_bound(indices, end) - indices.begin();
      if (lo == hi) return;
      rebased.assign(indices.begin() + lo, indices.begin() + hi);
      for (uint32_t& index : rebased) index -= static_cast<uint32_t>(begin);
      total = total + kernel(d_chunk, upload_index(rebased), size_t(lo), size_t(hi - lo));
    });
    return total;
  }
  // sum_i scalars_host[i] * bases[indices[i]], from the staged copies where these are a staged
  // split's vectors, else uploading scalars and indices.
  template <class Curve, class Engine, class Bases>
  ec::jacobian_t<Curve> msm(Engine& engine, Bases& bases, std::span<const ec::affine_t<Curve>> host_bases,
                            std::span<const uint32_t> indices, std::span<const Fr> scalars_host) {
    if (indices.empty() && host_bases.size() < scalars_host.size())
      fail("cuda msm: {} scalars but only {} bases", scalars_host.size(), host_bases.size());
    if (!indices.empty() && indices.size() != scalars_host.size())
      fail("cuda msm: {} indices but {} scalars", indices.size(), scalars_host.size());
    for (const StagedSplit& split : std::span(staged).first(kSharedDigitSplits)) {
      if (!split.holds(indices, scalars_host)) continue;
      if (const auto* table = bases.table(host_bases))
        return engine.msm(*table, split.d_significant,
                          shared_digits(split, msm::DigitLayout::fixed_base(table->sets()), table->window_bits()),
                          stream.get());
      if (const auto* d_bases = bases.find(host_bases))
        return engine.msm(d_bases, split.d_significant, shared_digits(split, msm::DigitLayout::per_window(), 0),
                          stream.get());
    }
    for (const StagedSplit& split : staged)
      if (split.holds(indices, scalars_host))
        return msm_of_device_scalars<Curve>(engine, bases, host_bases, indices, split.d_significant, split.d_scalars,
                                            scalars_host.size());
    return msm_of_device_scalars<Curve>(engine, bases, host_bases, indices, nullptr, upload_scalars(scalars_host),
                                        scalars_host.size());
  }
  // The digits of a staged split in `layout` (at `window_bits`, 0: the policy's), computed at
  // their first use in that layout (under compute->busy).
  const msm::SortedDigits& shared_digits(const StagedSplit& split, msm::DigitLayout layout, int window_bits) {
    auto& [digits, of_staging, of_scalars] = compute->witness_digits[layout.over_table()];
    const msm::SortedDigits& sorted = digits.sorted();
    if (of_staging != staging || of_scalars != split.d_scalars || sorted.layout != layout ||
        (window_bits && sorted.window_bits != window_bits))
      digits.compute(split.d_scalars, split.scalars.size(), stream.get(), window_bits, layout);
    of_staging = staging, of_scalars = split.d_scalars;
    return digits.sorted();
  }
  template <class Curve, class Engine, class Bases>
  ec::jacobian_t<Curve> msm_of_device_scalars(Engine& engine, Bases& bases, std::span<const ec::affine_t<Curve>> host_bases,
                                              std::span<const uint32_t> indices, const uint32_t* d_indices,
                                              const Fr* d_scalars, size_t count) {
    if (const auto* table = bases.table(host_bases))
      return engine.msm(*table, d_indices ? d_indices : upload_index(indices), d_scalars, count, stream.get());
    return over_bases<Curve>(bases, host_bases, indices, d_indices, count,
                             [&](const ec::affine_t<Curve>* d_bases, const uint32_t* d_index, size_t first, size_t n) {
                               return engine.msm(d_bases, d_index, d_scalars + first, n, stream.get());
                             });
  }
  template <class Curve, class Engine, class Bases>
  ec::jacobian_t<Curve> sum(Engine& engine, Bases& bases, std::span<const ec::affine_t<Curve>> host_bases,
                            std::span<const uint32_t> indices) {
    const uint32_t* d_indices = nullptr;
    for (const StagedSplit& split : staged)
      if (split.holds_ones(indices)) d_indices = split.d_ones;
    return over_bases<Curve>(bases, host_bases, indices, d_indices, indices.size(),
                             [&](const ec::affine_t<Curve>* d_bases, const uint32_t* d_index, size_t, size_t n) {
                               return engine.sum(d_bases, d_index, n, stream.get());
                             });
  }
};

namespace {

// A thread waiting for the current device sleeps until the device is done rather than spin on a
// core (the runtime's default while the process has fewer contexts than cores): those cores are
// the syntheses' and the witness split's. The device's primary context takes the flag here; a
// context of the caller's own (faulty-cuda's) keeps the flags it was made with, which the runtime
// cannot change (cudaErrorIncompatibleDriverContext).
void wait_for_the_device_asleep() {
  const cudaError_t status = cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
  if (status == cudaErrorIncompatibleDriverContext) {
    (void)cudaGetLastError();
    return;
  }
  CUDA_OK(status);
}

}  // namespace

CudaBackend::CudaBackend(size_t stream_chunk_points) {
  if (stream_chunk_points == 0) fail("backend 'cuda': base chunks of zero points");
  if (cuda::cuda_device_count() == 0)
    fail("backend 'cuda': no CUDA device found (cudaGetDeviceCount reports none); use --backend cpu");
  wait_for_the_device_asleep();
  impl_ = std::make_unique<Impl>(stream_chunk_points);
}

CudaBackend::~CudaBackend() = default;

namespace {

// The shared workspaces' bytes: G2's MSMs run on the digits of the witness (bucket memory alone)
// where the bases are prepared; G1's also serve the quotient's n scalars and their own digits.
struct WorkspaceBytes {
  size_t ntt, g1, g2, digits;
  explicit WorkspaceBytes(const ProvingKey& pk)
      : ntt(ntt::CudaNtt::workspace_bytes(pk.lg_domain)),
        g1(msm::CudaMsm<bls12_381::G1Curve>::workspace_bytes(std::max<size_t>(pk.domain_size(), pk.num_vars))),
        g2(msm::CudaMsm<bls12_381::G2Curve>::workspace_bytes(pk.num_vars) - msm::CudaMsmDigits::workspace_bytes(pk.num_vars)),
        digits(msm::CudaMsmDigits::workspace_bytes(pk.num_vars)) {}
  size_t total() const { return ntt + g1 + g2 + digits; }
};

// The rates behind the fixed-base options' estimates, measured on the H200
// (kernels/bench/h200-20261203b/final): seconds per pair of the MSM cost model (GpuMsmPolicy::cost;
// G1 2^24 123.0 ms, G2 352.2 ms) and per point doubling of a table's build (2^24 bases at c = 22:
// G1 1.36 s, G2 3.18 s). Another GPU scales both alike, which leaves the plan's payback unchanged.
struct CurveRates {
  double pair_s, doubling_s;
};
constexpr CurveRates g1_rates{3.83e-10, 3.4e-10}, g2_rates{1.10e-9, 7.8e-10};

// The fixed-base table of n points of `Curve` in `sets` bucket sets: what it holds beyond the
// points, and the estimates of its build and of what it saves an MSM of `scalars` of them (at
// most n; workspace_bytes: filled in by the caller).
template <class Curve>
zkpipe::policy::FixedBaseOption fixed_base_option(KeyArray array, size_t n, size_t scalars, int sets,
                                                  const CurveRates& rates) {
  using Policy = msm::GpuMsmPolicy;
  const int c = Policy::fixed_base_window_bits(n);
  zkpipe::policy::FixedBaseOption option{.table = {array, uint32_t(sets)}};
  option.table_bytes = msm::CudaFixedBases<Curve>::table_bytes(n, c, sets) - n * sizeof(ec::affine_t<Curve>);
  const int last_row_bits = msm::DigitLayout::fixed_base(sets).row_offset(c, Policy::table_rows(c, sets) - 1);
  option.build_s = double(n) * last_row_bits * rates.doubling_s;  // each row doubled from the one before
  const size_t m = std::min(scalars, n);
  option.saving_s = std::max(0.0, rates.pair_s * (Policy::cost(m, Policy::window_bits(m), 0) - Policy::cost(m, c, sets)));
  return option;
}

// The fixed-base tables the backend can build, each array's of one set and of two (half the
// rows), each charged its curve's workspaces for MSMs over tables of its layout: the largest of
// its arrays' one-shot MSMs, and the witness's digits (for a, b1 and b2); each saving estimated
// for its MSM's `scalars`.
std::vector<zkpipe::policy::FixedBaseOption> fixed_base_options(const ProvingKey& pk, const MsmScalarCounts& scalars) {
  using G1 = bls12_381::G1Curve;
  using G2 = bls12_381::G2Curve;
  struct Array {
    KeyArray array;
    size_t n, scalars;
  };
  const Array g1_arrays[] = {{KeyArray::a, pk.a.size(), scalars.a},
                             {KeyArray::b1, pk.b1.size(), scalars.b},
                             {KeyArray::l, pk.l.size(), scalars.l},
                             {KeyArray::h, pk.h.size(), scalars.h}};
  std::vector<zkpipe::policy::FixedBaseOption> options;
  for (int sets : {1, 2}) {
    const auto layout = msm::DigitLayout::fixed_base(sets);
    const size_t witness_digits = msm::CudaMsmDigits::workspace_bytes(pk.num_vars, 0, layout);
    size_t g1_workspace = 0;
    for (const Array& a : g1_arrays) g1_workspace = std::max(g1_workspace, msm::CudaMsm<G1>::workspace_bytes(a.n, 0, layout));
    const size_t g2_workspace = msm::CudaMsm<G2>::workspace_bytes(pk.b2.size(), 0, layout);
    for (const Array& a : g1_arrays) {
      options.push_back(fixed_base_option<G1>(a.array, a.n, a.scalars, sets, g1_rates));
      options.back().workspace_bytes = witness_digits + g1_workspace;
    }
    options.push_back(fixed_base_option<G2>(KeyArray::b2, pk.b2.size(), scalars.b, sets, g2_rates));
    options.back().workspace_bytes = witness_digits + g2_workspace;
  }
  return options;
}

}  // namespace

zkpipe::policy::DeviceFootprint CudaBackend::device_footprint(const ProvingKey& pk, const MsmScalarCounts& scalars) const {
  const size_t chunk = impl_->g1_bases.chunk_points();
  return {pk.msm_point_bytes(), WorkspaceBytes(pk).total(), 3 * pk.domain_size() * sizeof(Fr) + split_capacity(pk),
          2 * chunk * (sizeof(G1Affine) + sizeof(G2Affine)) + chunk * sizeof(uint32_t) +
              msm::CudaMsmDigits::workspace_bytes(chunk),
          fixed_base_options(pk, scalars)};
}

std::string CudaBackend::prepare(const ProvingKey& pk, std::span<const FixedBaseTable> fixed_bases) {
  bool uploaded = false;
  const auto start = std::chrono::steady_clock::now();
  const std::shared_ptr<const DeviceKey> key = DeviceKey::of(pk, fixed_bases, impl_->stream.get(), uploaded);
  impl_->g1_bases.use(key);
  impl_->g2_bases.use(key);
  impl_->compute->reserve(pk, *key, impl_->stream.get());
  impl_->quotient.reserve(3 * pk.domain_size());
  const WorkspaceBytes workspace(pk);
  std::string held = fmt::format(
      "cuda: key bases {:.1f} MiB on the device ({}); shared workspace: NTT {:.1f} MiB, G1 MSM {:.1f} MiB, "
      "G2 MSM {:.1f} MiB, witness digits {:.1f} MiB; this worker's quotient {:.1f} MiB\n",
      mib(key->bytes()), uploaded ? "uploaded" : "the device's copy, shared", mib(workspace.ntt), mib(workspace.g1),
      mib(workspace.g2), mib(workspace.digits), mib(3 * pk.domain_size() * sizeof(Fr)));
  if (uploaded && !fixed_bases.empty()) {
    std::vector<std::string> names;
    for (const FixedBaseTable& table : fixed_bases)
      names.push_back(fmt::format("{}{}", zkpipe::policy::key_array_name(table.array),
                                  table.sets == 1 ? "" : fmt::format(" ({} sets)", table.sets)));
    held += fmt::format("cuda: fixed-base tables of {} built in {:.2f} s ({:.1f} MiB of the bases above)\n",
                        fmt::join(names, ", "),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                        mib(key->table_bytes()));
  }
  return held;
}

std::string CudaBackend::reserve_witness_staging(const ProvingKey& pk, WitnessHostMemory from) {
  const size_t bytes = split_capacity(pk);
  Impl& impl = *impl_;
  impl.witness_device.reserve(bytes);
  if (from == WitnessHostMemory::pinned) {
    impl.witness_host.reserve(bytes);
    impl.split_block = {reinterpret_cast<std::byte*>(impl.witness_host.get()), impl.witness_host.bytes()};
  } else {
    if (impl.witness_pageable.size() < bytes) impl.witness_pageable.resize(bytes);
    impl.split_block = impl.witness_pageable;
  }
  return fmt::format("cuda: this worker's witness staging {:.1f} MiB on the device, {:.1f} MiB {} host\n", mib(bytes),
                     mib(bytes), from == WitnessHostMemory::pinned ? "pinned" : "pageable");
}

std::span<std::byte> CudaBackend::witness_split_memory() { return impl_->split_block; }

StagedWitness CudaBackend::stage_witness(const ProofSplits& splits, WitnessHostMemory from) {
  Impl& impl = *impl_;
  release_staged_witness(impl.staging);
  const std::span<const std::byte> block = splits.memory.used();
  impl.witness_device.reserve(block.size());
  uint8_t* d_witness = impl.witness_device.get();
  const cudaStream_t copy = impl.witness_copy.get();
  const std::byte* source = block.data();
  // From pinned memory: the splits' own block where they were split into this backend's buffer,
  // else a copy of it there first; from pageable memory: the splits' block as it is.
  if (from == WitnessHostMemory::pinned && source != reinterpret_cast<const std::byte*>(impl.witness_host.get())) {
    impl.witness_host.reserve(block.size());
    copy_on_every_core(impl.witness_host.get(), source, block.size());
    source = reinterpret_cast<const std::byte*>(impl.witness_host.get());
  }
  CUDA_OK(cudaMemcpyAsync(d_witness, source, block.size(), cudaMemcpyHostToDevice, copy));
  impl.witness_copy.synchronize();
  impl.staged = {StagedSplit(splits.all, block.data(), d_witness), StagedSplit(splits.b, block.data(), d_witness),
                 StagedSplit(splits.priv, block.data(), d_witness)};
  impl.staging = ++Impl::stagings;
  return StagedWitness(this, impl.staging, block.size());
}

std::vector<BackendCopy> CudaBackend::take_copies() {
  std::vector<BackendCopy> copies = impl_->g1_bases.take_copies(), g2 = impl_->g2_bases.take_copies();
  copies.insert(copies.end(), g2.begin(), g2.end());
  std::ranges::sort(copies, {}, &BackendCopy::start);
  return copies;
}

void CudaBackend::set_copy_watchdog(CopyWatchdog watchdog) { impl_->copy_watchdog = std::move(watchdog); }

void CudaBackend::release_staged_witness(uint64_t staging) noexcept {
  if (staging == impl_->staging) impl_->staged = {};
}

void CudaBackend::stage_quotient_inputs(std::span<const Fr> a, std::span<const Fr> b, std::span<const Fr> c) {
  const size_t n = a.size();
  if (b.size() != n || c.size() != n)
    fail("cuda quotient: vectors of {}, {}, {} elements differ in size", a.size(), b.size(), c.size());
  auto& q = impl_->quotient;
  const cudaStream_t s = impl_->stream.get();
  const CopyWatchdog& watchdog = impl_->copy_watchdog;
  q.reserve(3 * n);
  std::optional<CopyWatch> watch;
  if (watchdog.timeout_s > 0) watch.emplace(watchdog.timeout_s, watchdog.on_stall);
  if (watchdog.before_copy) watchdog.before_copy(s);
  q.upload(a, s, 0);
  q.upload(b, s, n);
  q.upload(c, s, 2 * n);
  impl_->stream.synchronize();
  if (watch && !watch->finish()) {
    throw CopyStalled(fmt::format("cuda: the staging copy of a, b, c ({:.1f} MiB) made no progress: its watchdog gave "
                                  "up after {} s",
                                  mib(3 * n * sizeof(Fr)), watchdog.timeout_s));
  }
  impl_->staged_n = n;
  impl_->quotient_n = 0;
}

void CudaBackend::staged_quotient_evaluations(const ntt::Domain& domain) {
  if (impl_->staged_n != domain.n)
    fail("cuda quotient: {} elements staged for a domain of {}", impl_->staged_n, domain.n);
  Fr* d_a = impl_->quotient.get();
  {
    std::lock_guard busy(impl_->compute->busy);
    impl_->compute->ntt.quotient_evaluations(d_a, d_a + domain.n, d_a + 2 * domain.n, domain, impl_->stream.get());
    impl_->stream.synchronize();
  }
  impl_->staged_n = 0;  // b and c are clobbered
  impl_->quotient_n = domain.n;
}

G1 CudaBackend::staged_quotient_msm(std::span<const G1Affine> bases) {
  const size_t n = std::exchange(impl_->quotient_n, 0);
  if (n == 0) fail("cuda quotient: staged_quotient_msm without a computed quotient");
  if (bases.size() < n) fail("cuda msm: {} quotient scalars but only {} bases", n, bases.size());
  std::lock_guard busy(impl_->compute->busy);
  return impl_->msm_of_device_scalars<bls12_381::G1Curve>(impl_->compute->g1, impl_->g1_bases, bases, {}, nullptr,
                                                          impl_->quotient.get(), n);
}

void CudaBackend::quotient_evaluations(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c,
                                       const ntt::Domain& domain) {
  if (a.size() != domain.n)
    fail("cuda quotient: vectors of {} elements for a domain of {}", a.size(), domain.n);
  stage_quotient_inputs(a, b, c);
  staged_quotient_evaluations(domain);
  impl_->quotient.download(a, impl_->stream.get(), 0);
  impl_->stream.synchronize();
  impl_->quotient_n = 0;
}

G1 CudaBackend::msm(std::span<const G1Affine> bases, std::span<const uint32_t> indices, std::span<const Fr> scalars) {
  std::lock_guard busy(impl_->compute->busy);
  return impl_->msm<bls12_381::G1Curve>(impl_->compute->g1, impl_->g1_bases, bases, indices, scalars);
}
G2 CudaBackend::msm(std::span<const G2Affine> bases, std::span<const uint32_t> indices, std::span<const Fr> scalars) {
  std::lock_guard busy(impl_->compute->busy);
  return impl_->msm<bls12_381::G2Curve>(impl_->compute->g2, impl_->g2_bases, bases, indices, scalars);
}
G1 CudaBackend::sum(std::span<const G1Affine> bases, std::span<const uint32_t> indices) {
  std::lock_guard busy(impl_->compute->busy);
  return impl_->sum<bls12_381::G1Curve>(impl_->compute->g1, impl_->g1_bases, bases, indices);
}
G2 CudaBackend::sum(std::span<const G2Affine> bases, std::span<const uint32_t> indices) {
  std::lock_guard busy(impl_->compute->busy);
  return impl_->sum<bls12_381::G2Curve>(impl_->compute->g2, impl_->g2_bases, bases, indices);
}

}  // namespace zk::groth16
