#include <algorithm>
#include <vector>

#include "engine/circuits/circuit.hpp"
#include "engine/circuits/poseidon.hpp"
#include "engine/util/error.hpp"
#include "engine/util/rng.hpp"
#include "kernels/util/parallel.hpp"

namespace zk::circuits {
namespace {

using r1cs::ConstraintSystem;
using r1cs::Variable;

constexpr int node_bits = 255;

// Range-checks x into `node_bits` boolean variables: b_i * b_i = b_i and sum 2^i b_i = x.
void decompose_into_bits(ConstraintSystem& cs, const LcValue& x) {
  uint64_t limbs[4];
  x.value.to_canonical(limbs);
  const bool constraints = !cs.is_witness_generator();
  LC packed;
  Fr power = Fr::one();
  for (int i = 0; i < node_bits; ++i) {
    bool bit = (limbs[i / 64] >> (i % 64)) & 1;
    Variable b = cs.alloc_private(bit ? Fr::one() : Fr::zero());
    if (!constraints) continue;
    cs.enforce(b, b, b);
    packed.add(b.index, power);
    power = power.dbl();
  }
  if (constraints) cs.enforce(packed, r1cs::ONE, x.lc);
}

class PoseidonMerkle final : public Circuit {
 public:
  static constexpr int max_depth = 32;
  // Per level: the Poseidon hash, two 255-bit decompositions with their packings, the boolean
  // index bit and the left/right selection. Per path: the root and index equalities.
  static uint64_t hash_constraints() {
    return PoseidonParams::full_rounds * 3 * 3 + PoseidonParams::partial_rounds * (3 + 2);
  }
  static uint64_t level_constraints() { return hash_constraints() + 2 * (node_bits + 1) + 2; }
  static constexpr uint64_t path_overhead = 2;

  explicit PoseidonMerkle(CircuitSpec spec) : Circuit(std::move(spec)) {
    uint64_t target = this->spec().target_constraints;
    uint64_t full_path = max_depth * level_constraints() + path_overhead;
    if (target >= full_path) {
      depth_ = max_depth;
      paths_ = target / full_path;
    } else {
      depth_ = static_cast<int>(std::max<uint64_t>(1, (target - std::min(target, path_overhead)) /
                                                          level_constraints()));
      paths_ = 1;
    }
  }

  void synthesize(ConstraintSystem& cs, uint64_t witness_seed) const override {
    Rng rng(witness_seed);
    struct Path {
      Fr leaf, root;
      uint64_t index;
      std::vector<Fr> siblings;
    };
    std::vector<Path> paths(paths_);
    for (auto& p : paths) {
      p.leaf = rng.field<Fr>();
      p.index = rng.next_u64() & ((depth_ >= 64) ? ~0ull : ((1ull << depth_) - 1));
      Fr cur = p.leaf;
      for (int level = 0; level < depth_; ++level) {
        p.siblings.push_back(rng.field<Fr>());
        bool right = (p.index >> level) & 1;
        cur = right ? poseidon_hash2(p.siblings.back(), cur) : poseidon_hash2(cur, p.siblings.back());
      }
      p.root = cur;
    }
    // Public inputs first: each path's root and leaf index.
    std::vector<std::pair<Variable, Variable>> publics;
    for (const auto& p : paths)
      publics.emplace_back(cs.alloc_public(p.root), cs.alloc_public(Fr::from_u64(p.index)));
    const bool constraints = !cs.is_witness_generator();
    for (size_t k = 0; k < paths.size(); ++k) {
      const Path& p = paths[k];
      LcValue cur = LcValue::of(cs, cs.alloc_private(p.leaf), p.leaf);
      LC index_bits;
      for (int level = 0; level < depth_; ++level) {
        bool right = (p.index >> level) & 1;
        Fr bit_value = right ? Fr::one() : Fr::zero();
        Variable bit = cs.alloc_private(bit_value);
        if (constraints) {
          cs.enforce(bit, bit, bit);
          index_bits.add(bit.index, Fr::from_u64(uint64_t{1} << level));
        }
        LcValue sibling = LcValue::of(cs, cs.alloc_private(p.siblings[level]), p.siblings[level]);
        decompose_into_bits(cs, sibling);
        // swap = bit * (sibling - cur); left = cur + swap; right = sibling - swap.
        Fr swap_value = bit_value * (sibling.value - cur.value);
        Variable swap = cs.alloc_private(swap_value);
        LcValue left{LC(), cur.value + swap_value}, rightv{LC(), sibling.value - swap_value};
        if (constraints) {
          cs.enforce(bit, sibling.lc - cur.lc, swap);
          left.lc = cur.lc + LC(swap);
          rightv.lc = sibling.lc - LC(swap);
        }
        cur = poseidon_hash2_gadget(cs, left, rightv);
        decompose_into_bits(cs, cur);
      }
      if (constraints) {
        cs.enforce(cur.lc, r1cs::ONE, publics[k].first);
        cs.enforce(index_bits, r1cs::ONE, publics[k].second);
      }
    }
  }

 private:
  int depth_ = 1;
  uint64_t paths_ = 1;
};

class Dense final : public Circuit {
 public:
  explicit Dense(CircuitSpec spec) : Circuit(std::move(spec)) {
    if (this->spec().target_constraints < 2)
      fail("circuit 'dense' needs at least 2 constraints (got {})", this->spec().target_constraints);
  }

  // v_i = (v_{i-1} + k_i v_{i-2} + c_i) * (v_{i-3} + d_i) over random constants; the inputs
  // v_{-3..-1} are x (public) and two private seeds; out = v_last is public.
  void synthesize(ConstraintSystem& cs, uint64_t witness_seed) const override {
    uint64_t chain = spec().target_constraints - 1;
    // The constants depend on the spec only. Each block of links draws them from its own stream
    // ("dense" + block), so they are drawn on every core the caller may use.
    struct Link {
      Fr k, c, d;
    };
    constexpr uint64_t block_links = 4096;
    std::vector<Link> links(chain);
    parallel_for((chain + block_links - 1) / block_links, [&](size_t first, size_t last) {
      for (size_t block = first; block < last; ++block) {
        Rng structure(0x64656e7365ull + block);
        for (uint64_t i = block * block_links; i < std::min(chain, (block + 1) * block_links); ++i)
          links[i] = {structure.field<Fr>(), structure.field<Fr>(), structure.field<Fr>()};
      }
    });
    Rng witness(witness_seed);
    Fr x = witness.field<Fr>(), s1 = witness.field<Fr>(), s2 = witness.field<Fr>();
    std::vector<Fr> values{s2, s1, x};  // v_{-3}, v_{-2}, v_{-1}
    values.reserve(chain + 3);
    for (uint64_t i = 0; i < chain; ++i) {
      const Fr* v = &values[i];
      values.push_back((v[2] + links[i].k * v[1] + links[i].c) * (v[0] + links[i].d));
    }
    Variable x_var = cs.alloc_public(x);
    Variable out_var = cs.alloc_public(values.back());
    std::vector<Variable> vars{cs.alloc_private(s2), cs.alloc_private(s1), x_var};
    vars.reserve(chain + 3);
    const bool constraints = !cs.is_witness_generator();
    for (uint64_t i = 0; i < chain; ++i) {
      Variable next = cs.alloc_private(values[i + 3]);
      const Variable* v = &vars[i];
      if (constraints)
        cs.enforce(LC(v[2]) + LC(v[1]) * links[i].k + LC::constant(links[i].c), LC(v[0]) + LC::constant(links[i].d),
                   next);
      vars.push_back(next);
    }
    if (constraints) cs.enforce(vars.back(), r1cs::ONE, out_var);
  }
};

}  // namespace

std::vector<std::string> circuit_names() { return {"poseidon-merkle", "dense"}; }

std::unique_ptr<Circuit> make_circuit(const CircuitSpec& spec) {
  if (spec.target_constraints == 0 || spec.target_constraints > max_target_constraints)
    fail("circuit size {} is out of range: give 1..{} constraints", spec.target_constraints,
         max_target_constraints);
  if (spec.name == "poseidon-merkle") return std::make_unique<PoseidonMerkle>(spec);
  if (spec.name == "dense") return std::make_unique<Dense>(spec);
  fail("unknown circuit '{}': the built-in circuits are poseidon-merkle and dense", spec.name);
}

}  // namespace zk::circuits
