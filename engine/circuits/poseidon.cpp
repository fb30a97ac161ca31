#include "engine/circuits/poseidon.hpp"

#include "engine/util/rng.hpp"

namespace zk::circuits {
namespace {

constexpr uint64_t constants_seed = 0x7a6b706970652d70ull;  // "zkpipe-p", the stream's seed

PoseidonParams make_params() {
  PoseidonParams p;
  Rng rng(constants_seed ^ 0x6f736569646f6e33ull);  // ^ "oseidon3"
  for (auto& round : p.round_constants)
    for (auto& c : round) c = rng.field<Fr>();
  for (int i = 0; i < PoseidonParams::width; ++i)
    for (int j = 0; j < PoseidonParams::width; ++j)
      p.mds[i][j] = (Fr::from_u64(i) + Fr::from_u64(PoseidonParams::width + j)).inverse();
  return p;
}

bool is_full_round(int round) {
  constexpr int half = PoseidonParams::full_rounds / 2;
  return round < half || round >= half + PoseidonParams::partial_rounds;
}

Fr pow5(const Fr& x) {
  Fr x2 = x.sqr();
  return x2.sqr() * x;
}

}  // namespace

const PoseidonParams& PoseidonParams::get() {
  static const PoseidonParams params = make_params();
  return params;
}

Fr poseidon_hash2(const Fr& left, const Fr& right) {
  const auto& p = PoseidonParams::get();
  std::array<Fr, 3> state{left, right, Fr::zero()};
  for (int r = 0; r < PoseidonParams::rounds; ++r) {
    for (int i = 0; i < 3; ++i) state[i] += p.round_constants[r][i];
    for (int i = 0; i < (is_full_round(r) ? 3 : 1); ++i) state[i] = pow5(state[i]);
    std::array<Fr, 3> mixed{};
    for (int i = 0; i < 3; ++i) {
      mixed[i] = Fr::zero();
      for (int j = 0; j < 3; ++j) mixed[i] += p.mds[i][j] * state[j];
    }
    state = mixed;
  }
  return state[0];
}

namespace {

// x^5 with three constraints: x*x = x2, x2*x2 = x4, x4*x = x5.
LcValue sbox_gadget(ConstraintSystem& cs, const LcValue& x) {
  Fr x2 = x.value.sqr(), x4 = x2.sqr(), x5 = x4 * x.value;
  auto v2 = cs.alloc_private(x2), v4 = cs.alloc_private(x4), v5 = cs.alloc_private(x5);
  if (!cs.is_witness_generator()) {
    cs.enforce(x.lc, x.lc, v2);
    cs.enforce(v2, v2, v4);
    cs.enforce(v4, x.lc, v5);
  }
  return LcValue::of(cs, v5, x5);
}

// Replaces a long linear combination by a fresh variable (lc * 1 = v).
LcValue materialize(ConstraintSystem& cs, const LcValue& x) {
  auto v = cs.alloc_private(x.value);
  if (!cs.is_witness_generator()) cs.enforce(x.lc, r1cs::ONE, v);
  return LcValue::of(cs, v, x.value);
}

}  // namespace

LcValue poseidon_hash2_gadget(ConstraintSystem& cs, const LcValue& left, const LcValue& right) {
  const auto& p = PoseidonParams::get();
  const bool constraints = !cs.is_witness_generator();
  std::array<LcValue, 3> state{left, right, LcValue{LC(), Fr::zero()}};
  for (int r = 0; r < PoseidonParams::rounds; ++r) {
    for (int i = 0; i < 3; ++i) {
      if (constraints) state[i].lc.add(r1cs::ONE.index, p.round_constants[r][i]);
      state[i].value += p.round_constants[r][i];
    }
    bool full = is_full_round(r);
    for (int i = 0; i < (full ? 3 : 1); ++i) state[i] = sbox_gadget(cs, state[i]);
    std::array<LcValue, 3> mixed;
    for (int i = 0; i < 3; ++i) {
      mixed[i] = {LC(), Fr::zero()};
      for (int j = 0; j < 3; ++j) {
        if (constraints) mixed[i].lc.add(state[j].lc, p.mds[i][j]);
        mixed[i].value += p.mds[i][j] * state[j].value;
      }
    }
    // In partial rounds elements 1 and 2 are never S-boxed; pin them to variables so their
    // linear combinations do not grow round after round.
    if (!full)
      for (int i = 1; i < 3; ++i) mixed[i] = materialize(cs, mixed[i]);
    state = mixed;
  }
  return state[0];
}

}  // namespace zk::circuits
