// circuit.hpp — zkpipe's built-in circuits, chosen by name and sized by a target constraint count.
//
//  - "poseidon-merkle": Merkle inclusion proofs in Poseidon trees of depth up to 32, leaf index
//    public and bit-decomposed, every node range-checked into bits as Filecoin's circuits do: most
//    witness values are 0 or 1 (the shape supraseal's zero/one scalar split exploits).
//  - "dense": 64 chains of products of random linear combinations; almost every witness value is
//    a random field element (the worst case for the MSM).
// A circuit's constraint structure depends only on its spec; the witness on the seed as well.
// make_circuit() throws zk::Error for an unknown name or an unusable size, listing what is valid.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/r1cs/constraint_system.hpp"

namespace zk::circuits {

struct CircuitSpec {
  std::string name;
  uint64_t target_constraints = 0;
};

class Circuit {
 public:
  explicit Circuit(CircuitSpec spec) : spec_(std::move(spec)) {}
  virtual ~Circuit() = default;
  const CircuitSpec& spec() const { return spec_; }
  // Emits the constraints with the witness derived from `witness_seed`.
  virtual void synthesize(r1cs::ConstraintSystem& cs, uint64_t witness_seed) const = 0;

 private:
  CircuitSpec spec_;
};

std::unique_ptr<Circuit> make_circuit(const CircuitSpec& spec);
std::vector<std::string> circuit_names();

// Constraint budget above which setup or proving would not fit a 2^28 domain.
inline constexpr uint64_t max_target_constraints = (uint64_t{1} << 28) - 1024;

}  // namespace zk::circuits
