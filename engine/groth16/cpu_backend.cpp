#include "engine/groth16/cpu_backend.hpp"

#include <vector>

#include "kernels/msm/pippenger_cpu.hpp"
#include "kernels/ntt/ntt_cpu.hpp"

namespace zk::groth16 {
namespace {

template <class Affine>
std::vector<Affine> gather(std::span<const Affine> bases, std::span<const uint32_t> indices) {
  std::vector<Affine> out(indices.size());
  parallel_for(indices.size(), [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) out[i] = bases[indices[i]];
  }, 4096);
  return out;
}

template <class Curve>
ec::jacobian_t<Curve> msm_selected(std::span<const ec::affine_t<Curve>> bases,
                                   std::span<const uint32_t> indices, std::span<const Fr> scalars) {
  if (indices.empty()) return msm::msm<Curve>(bases.first(scalars.size()), scalars);
  auto selected = gather(bases, indices);
  return msm::msm<Curve>(std::span<const ec::affine_t<Curve>>(selected), scalars);
}

template <class Curve>
ec::jacobian_t<Curve> sum_selected(std::span<const ec::affine_t<Curve>> bases,
                                   std::span<const uint32_t> indices) {
  auto selected = gather(bases, indices);
  return msm::sum_points<Curve>(std::span<const ec::affine_t<Curve>>(selected));
}

}  // namespace

void CpuBackend::quotient_evaluations(std::span<Fr> a, std::span<Fr> b, std::span<Fr> c,
                                      const ntt::Domain& domain) {
  for (auto v : {a, b, c}) {
    ntt::intt(v, domain);
    ntt::coset_ntt(v, domain, domain.coset_shift);
  }
  parallel_for(a.size(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) a[i] = a[i] * b[i] - c[i];
  }, 8192);
}

G1 CpuBackend::msm(std::span<const G1Affine> bases, std::span<const uint32_t> indices,
                   std::span<const Fr> scalars) {
  return msm_selected<bls12_381::G1Curve>(bases, indices, scalars);
}
G2 CpuBackend::msm(std::span<const G2Affine> bases, std::span<const uint32_t> indices,
                   std::span<const Fr> scalars) {
  return msm_selected<bls12_381::G2Curve>(bases, indices, scalars);
}
G1 CpuBackend::sum(std::span<const G1Affine> bases, std::span<const uint32_t> indices) {
  return sum_selected<bls12_381::G1Curve>(bases, indices);
}
G2 CpuBackend::sum(std::span<const G2Affine> bases, std::span<const uint32_t> indices) {
  return sum_selected<bls12_381::G2Curve>(bases, indices);
}

}  // namespace zk::groth16
