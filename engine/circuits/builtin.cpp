#include <algorithm>
#include <memory>
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
  // Per level: the index bit, the sibling, the swap, the hash's variables (one per constraint)
  // and both nodes' bits. Per path: the leaf.
  static uint64_t level_vars() { return hash_constraints() + 2 * node_bits + 3; }
  uint64_t path_vars() const { return 1 + uint64_t(depth_) * level_vars(); }
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
    const std::vector<Path> paths = random_paths(witness_seed);
    // Public inputs first: each path's root and leaf index.
    std::vector<std::pair<Variable, Variable>> publics;
    for (const auto& p : paths)
      publics.emplace_back(cs.alloc_public(p.root), cs.alloc_public(Fr::from_u64(p.index)));
    // Each path is a part of its own: independent of the others, so generated on every core.
    cs.parts(paths.size(), path_vars(), [&](ConstraintSystem& path_cs, uint64_t k) {
      path_gadget(path_cs, paths[k], publics[k].first, publics[k].second);
    });
  }

 private:
  struct Path {
    Fr leaf, root;
    uint64_t index;
    std::vector<Fr> siblings;
  };

  // paths_ random leaves, indices and siblings, with their roots (computed one path per core).
  std::vector<Path> random_paths(uint64_t witness_seed) const {
    Rng rng(witness_seed);
    std::vector<Path> paths(paths_);
    for (auto& p : paths) {
      p.leaf = rng.field<Fr>();
      p.index = rng.next_u64() & ((depth_ >= 64) ? ~0ull : ((1ull << depth_) - 1));
      for (int level = 0; level < depth_; ++level) p.siblings.push_back(rng.field<Fr>());
    }
    parallel_for(paths.size(), [&](size_t first, size_t last) {
      for (size_t k = first; k < last; ++k) {
        Path& p = paths[k];
        p.root = p.leaf;
        for (int level = 0; level < depth_; ++level) {
          bool right = (p.index >> level) & 1;
          p.root = right ? poseidon_hash2(p.siblings[level], p.root) : poseidon_hash2(p.root, p.siblings[level]);
        }
      }
    });
    return paths;
  }

  // One path from its leaf to `root`, its index bits packed into `index`.
  void path_gadget(ConstraintSystem& path_cs, const Path& p, Variable root, Variable index) const {
    const bool constraints = !path_cs.is_witness_generator();
    LcValue cur = LcValue::of(path_cs, path_cs.alloc_private(p.leaf), p.leaf);
    LC index_bits;
    for (int level = 0; level < depth_; ++level) {
      bool right = (p.index >> level) & 1;
      Fr bit_value = right ? Fr::one() : Fr::zero();
      Variable bit = path_cs.alloc_private(bit_value);
      if (constraints) {
        path_cs.enforce(bit, bit, bit);
        index_bits.add(bit.index, Fr::from_u64(uint64_t{1} << level));
      }
      LcValue sibling = LcValue::of(path_cs, path_cs.alloc_private(p.siblings[level]), p.siblings[level]);
      decompose_into_bits(path_cs, sibling);
      // swap = bit * (sibling - cur); left = cur + swap; right = sibling - swap.
      Fr swap_value = bit_value * (sibling.value - cur.value);
      Variable swap = path_cs.alloc_private(swap_value);
      LcValue left{LC(), cur.value + swap_value}, rightv{LC(), sibling.value - swap_value};
      if (constraints) {
        path_cs.enforce(bit, sibling.lc - cur.lc, swap);
        left.lc = cur.lc + LC(swap);
        rightv.lc = sibling.lc - LC(swap);
      }
      cur = poseidon_hash2_gadget(path_cs, left, rightv);
      decompose_into_bits(path_cs, cur);
    }
    if (constraints) {
      path_cs.enforce(cur.lc, r1cs::ONE, root);
      path_cs.enforce(index_bits, r1cs::ONE, index);
    }
  }

  int depth_ = 1;
  uint64_t paths_ = 1;
};

class Dense final : public Circuit {
 public:
  explicit Dense(CircuitSpec spec) : Circuit(std::move(spec)) {
    if (this->spec().target_constraints < 2)
      fail("circuit 'dense' needs at least 2 constraints (got {})", this->spec().target_constraints);
  }

  // `lanes` chains one after the other, lane j over links [chain j / lanes, chain (j+1) / lanes):
  // v_i = (v_{i-1} + k_i v_{i-2} + c_i) * (v_{i-3} + d_i) over random constants, where a lane's
  // first links read x (public) as v_{i-1} and two private seeds as v_{i-2}, v_{i-3}. out = v_last
  // is public. The lanes are independent, so the witness is computed on every core the caller may
  // use; each lane draws its constants (which depend on the spec only) from its own stream.
  static constexpr uint64_t lanes = 64;

  void synthesize(ConstraintSystem& cs, uint64_t witness_seed) const override {
    const uint64_t chain = spec().target_constraints - 1;
    Rng witness(witness_seed);
    const Fr x = witness.field<Fr>(), s1 = witness.field<Fr>(), s2 = witness.field<Fr>();
    const std::unique_ptr<Fr[]> values = chain_values(chain, x, s1, s2);
    const Variable x_var = cs.alloc_public(x);
    const Variable out_var = cs.alloc_public(values[chain - 1]);
    const Variable s2_var = cs.alloc_private(s2), s1_var = cs.alloc_private(s1);
    const bool constraints = !cs.is_witness_generator();
    Variable last = x_var;
    for (uint64_t lane = 0; lane < lanes; ++lane) {
      Rng constants = lane_constants(lane);
      Variable before3 = s2_var, before2 = s1_var, before1 = x_var;
      for (uint64_t i = lane_begin(chain, lane); i < lane_begin(chain, lane + 1); ++i) {
        const Variable next = last = cs.alloc_private(values[i]);
        if (!constraints) continue;
        const Link link = next_link(constants);
        cs.enforce(LC(before1) + LC(before2) * link.k + LC::constant(link.c), LC(before3) + LC::constant(link.d), next);
        before3 = before2, before2 = before1, before1 = next;
      }
    }
    if (constraints) cs.enforce(last, r1cs::ONE, out_var);
  }

 private:
  struct Link {
    Fr k, c, d;
  };
  static uint64_t lane_begin(uint64_t chain, uint64_t lane) { return chain * lane / lanes; }
  static Rng lane_constants(uint64_t lane) { return Rng(0x64656e7365ull + lane); }  // "dense" + lane
  // k, c, d drawn in that order (a braced list evaluates left to right).
  static Link next_link(Rng& constants) { return {constants.field<Fr>(), constants.field<Fr>(), constants.field<Fr>()}; }

  // v_1 .. v_chain, each lane computed by one thread on the cores the caller may use.
  static std::unique_ptr<Fr[]> chain_values(uint64_t chain, const Fr& x, const Fr& s1, const Fr& s2) {
    // Not value-initialized: each lane's pages are first touched by the thread computing it.
    auto values = std::make_unique_for_overwrite<Fr[]>(chain);
    parallel_for(lanes, [&](size_t first_lane, size_t last_lane) {
      for (uint64_t lane = first_lane; lane < last_lane; ++lane) {
        Rng constants = lane_constants(lane);
        Fr before3 = s2, before2 = s1, before1 = x;
        for (uint64_t i = lane_begin(chain, lane); i < lane_begin(chain, lane + 1); ++i) {
          const Link link = next_link(constants);
          values[i] = (before1 + link.k * before2 + link.c) * (before3 + link.d);
          before3 = before2, before2 = before1, before1 = values[i];
        }
      }
    });
    return values;
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
