// generators.hpp — RapidCheck generators for field elements and curve points, built on zkpipe's
// seeded Rng so a shrunk counterexample is a seed that replays it.
#pragma once
#include <rapidcheck.h>

#include "engine/util/rng.hpp"
#include "kernels/ec/bls12-381.hpp"

namespace zk::testing {

using namespace bls12_381;

template <class F>
rc::Gen<F> arbitrary_field() {
  return rc::gen::map(rc::gen::arbitrary<uint64_t>(), [](uint64_t seed) { return Rng(seed).field<F>(); });
}
// Random multiples of the generator (so in the prime-order subgroup), sometimes infinity.
template <class Point>
rc::Gen<Point> arbitrary_point(const typename Point::affine& generator) {
  return rc::gen::map(rc::gen::arbitrary<uint64_t>(), [generator](uint64_t seed) {
    if (seed % 16 == 0) return Point::infinity();
    return mul(Point::from_affine(generator), Rng(seed).field<Fr>());
  });
}

}  // namespace zk::testing
