// cuda_backend.cpp — the CUDA prover backend (contract in cuda_backend.hpp). Host code only (g++):
// the device code lives in kernels/ (zkpipe_kernels_cuda), whose launchers it calls.
#include "engine/groth16/cuda_backend.hpp"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "engine/util/error.hpp"
#include "kernels/msm/pippenger_cuda.cuh"
#include "kernels/ntt/ntt_cuda.cuh"
#include "kernels/util/cuda_check.hpp"

namespace zk::groth16 {
namespace {

double mib(size_t bytes) { return double(bytes) / double(1 << 20); }

// Device copies of point arrays, by host address and length.
template <class Affine>
class DeviceBases {
 public:
  void keep(std::span<const Affine> host, cudaStream_t stream) {
    auto& copy = copies_[key(host)];
    copy = cuda::DeviceBuffer<Affine>(host.size());
    copy.upload(host, stream);
  }
  // The device copy of `host` when prepared, else a per-call upload.
  const Affine* find_or_upload(std::span<const Affine> host, cudaStream_t stream) {
    auto it = copies_.find(key(host));
    if (it != copies_.end()) return it->second.get();
    uploaded_.reserve(host.size());
    uploaded_.upload(host, stream);
    return uploaded_.get();
  }
  size_t bytes() const {
    size_t total = 0;
    for (const auto& [k, copy] : copies_) total += copy.bytes();
    return total;
  }

 private:
  static std::pair<const void*, size_t> key(std::span<const Affine> host) { return {host.data(), host.size()}; }
  std::map<std::pair<const void*, size_t>, cuda::DeviceBuffer<Affine>> copies_;
  cuda::DeviceBuffer<Affine> uploaded_;
};

}  // namespace

struct CudaBackend::Impl {
  cuda::CudaStream stream;
  ntt::CudaNtt ntt;
  msm::CudaMsm<bls12_381::G1Curve> g1;
  msm::CudaMsm<bls12_381::G2Curve> g2;
  DeviceBases<G1Affine> g1_bases;
  DeviceBases<G2Affine> g2_bases;
  cuda::DeviceBuffer<Fr> scalars, quotient;  // quotient: a, b, c one after the other
  size_t staged_n = 0;                        // elements of each staged quotient input
  size_t quotient_n = 0;                      // elements of the computed quotient (in its first n)
  cuda::DeviceBuffer<uint32_t> index;

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
  template <class Curve, class Engine, class Bases>
  ec::jacobian_t<Curve> msm(Engine& engine, Bases& bases, std::span<const ec::affine_t<Curve>> host_bases,
                            std::span<const uint32_t> indices, std::span<const Fr> scalars_host) {
    if (indices.empty() && host_bases.size() < scalars_host.size())
      fail("cuda msm: {} scalars but only {} bases", scalars_host.size(), host_bases.size());
    if (!indices.empty() && indices.size() != scalars_host.size())
      fail("cuda msm: {} indices but {} scalars", indices.size(), scalars_host.size());
    const auto* d_bases = bases.find_or_upload(host_bases, stream.get());
    const uint32_t* d_index = upload_index(indices);
    const Fr* d_scalars = upload_scalars(scalars_host);
    return engine.msm(d_bases, d_index, d_scalars, scalars_host.size(), stream.get());
  }
  template <class Curve, class Engine, class Bases>
  ec::jacobian_t<Curve> sum(Engine& engine, Bases& bases, std::span<const ec::affine_t<Curve>> host_bases,
                            std::span<const uint32_t> indices) {
    const auto* d_bases = bases.find_or_upload(host_bases, stream.get());
    return engine.sum(d_bases, upload_index(indices), indices.size(), stream.get());
  }
};

CudaBackend::CudaBackend() {
  if (cuda::cuda_device_count() == 0)
    fail("backend 'cuda': no CUDA device found (cudaGetDeviceCount reports none); use --backend cpu");
  impl_ = std::make_unique<Impl>();
}

CudaBackend::~CudaBackend() = default;

void CudaBackend::prepare(const ProvingKey& pk) {
  const cudaStream_t s = impl_->stream.get();
  for (const auto* points : {&pk.a, &pk.b1, &pk.l, &pk.h})
    impl_->g1_bases.keep({points->data(), points->size()}, s);
  impl_->g2_bases.keep({pk.b2.data(), pk.b2.size()}, s);
  impl_->stream.synchronize();
  const size_t n = pk.domain_size(), vars = pk.num_vars;
  fmt::print("cuda: key bases {:.1f} MiB on the device; workspace: quotient {:.1f} MiB, G1 MSM {:.1f} MiB, "
             "G2 MSM {:.1f} MiB\n",
              mib(impl_->g1_bases.bytes() + impl_->g2_bases.bytes()),
              mib(3 * n * sizeof(Fr) + ntt::CudaNtt::workspace_bytes(pk.lg_domain)),
              mib(msm::CudaMsm<bls12_381::G1Curve>::workspace_bytes(std::max<size_t>(n, vars))),
              mib(msm::CudaMsm<bls12_381::G2Curve>::workspace_bytes(vars)));
}

void CudaBackend::stage_quotient_inputs(std::span<const Fr> a, std::span<const Fr> b, std::span<const Fr> c) {
  const size_t n = a.size();
  if (b.size() != n || c.size() != n)
    fail("cuda quotient: vectors of {}, {}, {} elements differ in size", a.size(), b.size(), c.size());
  auto& q = impl_->quotient;
  const cudaStream_t s = impl_->stream.get();
  q.reserve(3 * n);
  q.upload(a, s, 0);
  q.upload(b, s, n);
  q.upload(c, s, 2 * n);
  impl_->stream.synchronize();
  impl_->staged_n = n;
  impl_->quotient_n = 0;
}

void CudaBackend::staged_quotient_evaluations(const ntt::Domain& domain) {
  if (impl_->staged_n != domain.n)
    fail("cuda quotient: {} elements staged for a domain of {}", impl_->staged_n, domain.n);
  Fr* d_a = impl_->quotient.get();
  impl_->ntt.quotient_evaluations(d_a, d_a + domain.n, d_a + 2 * domain.n, domain, impl_->stream.get());
  impl_->stream.synchronize();
  impl_->staged_n = 0;  // b and c are clobbered
  impl_->quotient_n = domain.n;
}

G1 CudaBackend::staged_quotient_msm(std::span<const G1Affine> bases) {
  const size_t n = std::exchange(impl_->quotient_n, 0);
  if (n == 0) fail("cuda quotient: staged_quotient_msm without a computed quotient");
  if (bases.size() < n) fail("cuda msm: {} quotient scalars but only {} bases", n, bases.size());
  const cudaStream_t s = impl_->stream.get();
  return impl_->g1.msm(impl_->g1_bases.find_or_upload(bases, s), nullptr, impl_->quotient.get(), n, s);
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
  return impl_->msm<bls12_381::G1Curve>(impl_->g1, impl_->g1_bases, bases, indices, scalars);
}
G2 CudaBackend::msm(std::span<const G2Affine> bases, std::span<const uint32_t> indices, std::span<const Fr> scalars) {
  return impl_->msm<bls12_381::G2Curve>(impl_->g2, impl_->g2_bases, bases, indices, scalars);
}
G1 CudaBackend::sum(std::span<const G1Affine> bases, std::span<const uint32_t> indices) {
  return impl_->sum<bls12_381::G1Curve>(impl_->g1, impl_->g1_bases, bases, indices);
}
G2 CudaBackend::sum(std::span<const G2Affine> bases, std::span<const uint32_t> indices) {
  return impl_->sum<bls12_381::G2Curve>(impl_->g2, impl_->g2_bases, bases, indices);
}

}  // namespace zk::groth16
