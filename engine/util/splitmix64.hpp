// splitmix64.hpp — SplitMix64 (Steele, Lea and Flood 2014, with Stafford's "Mix13" finalizer as
// Vigna's splitmix64.c has it), written once: Rng's stream (rng.hpp), and keyed_draw for the
// fault injector's draws keyed by (seed, site, partition, attempt) and the model's synthesis
// times keyed by (seed, partition, attempt). Not cryptographically secure.
#pragma once
#include <cstdint>
#include <initializer_list>

namespace zk {

// The increment of SplitMix64's state: 2^64 over the golden ratio, odd.
inline constexpr std::uint64_t splitmix64_gamma = 0x9e3779b97f4a7c15ull;

// SplitMix64's output from `state`: the state advanced by the gamma, then mixed (a bijection of
// 64-bit words, so distinct inputs give distinct, independent-looking outputs).
constexpr std::uint64_t splitmix64(std::uint64_t state) {
  std::uint64_t z = state + splitmix64_gamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A uniform double in [0, 1) as a pure function of a state and keys: each key folded into the
// state by one SplitMix64 mix, so distinct keys give independent-looking draws.
constexpr double keyed_draw(std::uint64_t state, std::initializer_list<std::uint64_t> keys) {
  for (const std::uint64_t key : keys) state = splitmix64(state ^ key);
  return double(state >> 11) * 0x1.0p-53;
}

}  // namespace zk
