// ntt_cpu.hpp — multithreaded number-theoretic transforms over Fr on the CPU: the reference the
// GPU kernels are checked against, and the CPU backend of the prover.
//
// All transforms are in place, natural order in and out, of size 2^lg_n <= 2^32:
//   ntt:        a_i <- sum_j a_j omega^(ij)
//   intt:       the inverse (includes the 1/n scale)
//   coset_ntt:  evaluations on shift*<omega>: a_j <- a_j shift^j, then ntt
// Thread-safe; parallel over worker_threads().
#pragma once
#include <span>

#include "kernels/ntt/domain.hpp"

namespace zk::ntt {

void ntt(std::span<Fr> a, const Domain& d);
void intt(std::span<Fr> a, const Domain& d);
// a_j <- a_j * g^j for j in [0, n), g any field element.
void scale_by_powers(std::span<Fr> a, const Fr& g);
void coset_ntt(std::span<Fr> a, const Domain& d, const Fr& shift);

}  // namespace zk::ntt
