#include "engine/groth16/setup.hpp"

#include <fmt/format.h>

#include "engine/util/rng.hpp"
#include "kernels/ntt/domain.hpp"
#include "kernels/util/parallel.hpp"

namespace zk::groth16 {
namespace {

using bls12_381::Fr;
using bls12_381::G1Curve;
using bls12_381::G2Curve;

// out[c] = scale * x_c / (tau - x_c) with x_c = start * step^c: Lagrange-style evaluations with
// one batched inversion per chunk.
std::vector<Fr> scaled_ratios(size_t count, const Fr& tau, const Fr& start, const Fr& step, const Fr& scale) {
  std::vector<Fr> out(count);
  parallel_for(count, [&](size_t begin, size_t end) {
    std::vector<Fr> x(end - begin), denom(end - begin), prefix(end - begin);
    Fr xc = start * step.pow_u64(begin), acc = Fr::one();
    for (size_t c = begin; c < end; ++c) {
      x[c - begin] = xc;
      denom[c - begin] = tau - xc;
      prefix[c - begin] = acc;
      acc = acc * denom[c - begin];
      xc = xc * step;
    }
    Fr inv = acc.inverse();
    for (size_t c = end; c-- > begin;) {
      Fr d_inv = inv * prefix[c - begin];
      inv = inv * denom[c - begin];
      out[c] = scale * x[c - begin] * d_inv;
    }
  }, 4096);
  return out;
}

}  // namespace

CpuFixedBase::CpuFixedBase() : g1_(bls12_381::g1_generator()), g2_(bls12_381::g2_generator()) {}
std::vector<G1Affine> CpuFixedBase::g1(std::span<const Fr> scalars) { return g1_.mul_many(scalars); }
std::vector<G2Affine> CpuFixedBase::g2(std::span<const Fr> scalars) { return g2_.mul_many(scalars); }

ToxicWaste ToxicWaste::from_seed(uint64_t seed) {
  Rng rng(seed ^ 0x746f786963ull);  // "toxic"
  return {rng.field<Fr>(), rng.field<Fr>(), rng.field<Fr>(), rng.field<Fr>()};
}

namespace {

// The key's scalars at tau: u, v (A's and B's columns), ic and l (the public and private
// combinations), h (the quotient's basis over delta).
struct KeyScalars {
  std::vector<Fr> u, v, ic, l, h;
};

KeyScalars key_scalars(const r1cs::R1cs& r1cs, const ToxicWaste& waste, const ntt::Domain& domain,
                       const SetupProgress& step) {
  const size_t m = r1cs.num_constraints(), n = domain.n;
  const uint32_t num_public = r1cs.num_public, num_vars = r1cs.num_vars;
  const Fr& tau = waste.tau;
  step("lagrange basis at tau");
  // L_c(tau) = (tau^n - 1)/n * w^c/(tau - w^c).
  Fr tau_n = tau.pow_u64(n);
  std::vector<Fr> lagrange = scaled_ratios(n, tau, Fr::one(), domain.omega, (tau_n - Fr::one()) * domain.n_inv);

  step("u, v, w at tau");
  KeyScalars k;
  k.u.assign(num_vars, Fr::zero()), k.v.assign(num_vars, Fr::zero());
  std::vector<Fr> w(num_vars, Fr::zero());
  // Column sums of each matrix weighted by the Lagrange basis: u_j = sum_c A[c][j] L_c(tau).
  auto weighted_columns = [&](const r1cs::SparseRows& matrix, std::vector<Fr>& out) {
    for (size_t c = 0; c < m; ++c)
      for (uint64_t e = matrix.row_start[c]; e < matrix.row_start[c + 1]; ++e)
        out[matrix.column[e]] += matrix.coeff[e] * lagrange[c];
  };
  weighted_columns(r1cs.matrices.a, k.u);
  weighted_columns(r1cs.matrices.b, k.v);
  weighted_columns(r1cs.matrices.c, w);
  for (uint32_t s = 0; s <= num_public; ++s) k.u[s] += lagrange[m + s];
  lagrange = {};

  Fr delta_inv = waste.delta.inverse();
  k.ic.resize(num_public + 1), k.l.resize(num_vars - num_public - 1);
  for (uint32_t s = 0; s < num_vars; ++s) {
    Fr combined = waste.beta * k.u[s] + waste.alpha * k.v[s] + w[s];
    if (s <= num_public) k.ic[s] = combined;
    else k.l[s - num_public - 1] = combined * delta_inv;
  }
  w = {};
  // H[i] = L^(2n)_{2i+1}(tau)/delta = (tau^2n - 1)/(2n) * g_i/(tau - g_i)/delta, g_i = w_2n w_n^i.
  Fr two_n_inv = (domain.n_inv * Fr::from_u64(2).inverse());
  k.h = scaled_ratios(n, tau, domain.coset_shift, domain.omega, (tau_n.sqr() - Fr::one()) * two_n_inv * delta_inv);
  return k;
}

// The key's points: the six fixed ones, then each array, its scalars times the generator.
void key_points(ProvingKey& pk, const KeyScalars& k, const ToxicWaste& waste, FixedBaseMultiplier& fixed_base,
                const SetupProgress& step) {
  auto one_g1 = [&](const Fr& s) { return fixed_base.g1(std::span(&s, 1))[0]; };
  auto one_g2 = [&](const Fr& s) { return fixed_base.g2(std::span(&s, 1))[0]; };
  pk.alpha1 = one_g1(waste.alpha);
  pk.beta1 = one_g1(waste.beta);
  pk.delta1 = one_g1(waste.delta);
  pk.beta2 = one_g2(waste.beta);
  pk.gamma2 = bls12_381::g2_generator();
  pk.delta2 = one_g2(waste.delta);
  step(fmt::format("G1 points: a ({})", fixed_base.name()));
  pk.a = fixed_base.g1(k.u);
  step("G1 points: b1");
  pk.b1 = fixed_base.g1(k.v);
  step("G1 points: ic, l");
  pk.ic = fixed_base.g1(k.ic);
  pk.l = fixed_base.g1(k.l);
  step("G1 points: h");
  pk.h = fixed_base.g1(k.h);
  step("G2 points: b2");
  pk.b2 = fixed_base.g2(k.v);
  pk.index_b_query();
}

}  // namespace

ProvingKey setup(const r1cs::R1cs& r1cs, const ToxicWaste& waste, const circuits::CircuitSpec& spec,
                 const SetupProgress& progress, FixedBaseMultiplier* fixed_base) {
  const SetupProgress step = [&](std::string_view name) {
    if (progress) progress(name);
  };
  const int lg = r1cs::domain_lg_size(r1cs.num_constraints(), r1cs.num_public);
  const ntt::Domain domain(lg);
  const KeyScalars scalars = key_scalars(r1cs, waste, domain, step);
  ProvingKey pk;
  pk.circuit = spec;
  pk.num_constraints = r1cs.num_constraints();
  pk.num_public = r1cs.num_public;
  pk.num_vars = r1cs.num_vars;
  pk.lg_domain = static_cast<uint32_t>(lg);
  pk.constraints = r1cs.matrices;
  std::unique_ptr<FixedBaseMultiplier> cpu;
  if (!fixed_base) fixed_base = (cpu = std::make_unique<CpuFixedBase>()).get();
  key_points(pk, scalars, waste, *fixed_base, step);
  return pk;
}

}  // namespace zk::groth16
