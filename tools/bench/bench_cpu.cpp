// bench_cpu — the CPU backend's kernels, timed: NTT (forward, natural order) and G1/G2 MSM of
// random scalars over random bases, 2^min..2^max, median of repeats after a warm-up run.
// Prints a table; a benchmark, not a test (figures depend on the machine and its load).
#include <algorithm>
#include <chrono>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "engine/util/rng.hpp"
#include "kernels/ec/fixed_base.hpp"
#include "kernels/msm/pippenger_cpu.hpp"
#include "kernels/ntt/ntt_cpu.hpp"

using namespace zk;
using namespace zk::bls12_381;

namespace {

template <class Fn>
double median_ms(int repeats, Fn&& fn) {
  fn();  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::vector<Fr> random_scalars(size_t n, uint64_t seed) {
  std::vector<Fr> s(n);
  parallel_for(n, [&](size_t b, size_t e) {
    Rng rng(seed + b);
    for (size_t i = b; i < e; ++i) s[i] = rng.field<Fr>();
  });
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_cpu: CPU NTT and MSM timings"};
  int lg_min = 16, lg_max = 20, repeats = 3;
  bool with_g2 = true;
  app.add_option("--lg-min", lg_min)->capture_default_str();
  app.add_option("--lg-max", lg_max)->check(CLI::Range(1, 26))->capture_default_str();
  app.add_option("--repeats", repeats)->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--g2", with_g2, "include G2 MSMs")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  fmt::print("bench_cpu: {} threads, median of {} after a warm-up\n", worker_threads(), repeats);
  fmt::print("{:>6} {:>12} {:>14} {:>14}\n", "lg n", "NTT ms", "G1 MSM ms", "G2 MSM ms");
  ec::FixedBaseTable<G1Curve> g1(g1_generator());
  ec::FixedBaseTable<G2Curve> g2(g2_generator());
  for (int lg = lg_min; lg <= lg_max; ++lg) {
    size_t n = size_t{1} << lg;
    ntt::Domain domain(lg);
    auto values = random_scalars(n, 1);
    double ntt_ms = median_ms(repeats, [&] { ntt::ntt(values, domain); });
    auto scalars = random_scalars(n, 2);
    auto g1_bases = g1.mul_many(random_scalars(n, 3));
    double g1_ms = median_ms(repeats, [&] { msm::msm<G1Curve>(std::span<const G1Affine>(g1_bases), scalars); });
    double g2_ms = 0;
    if (with_g2) {
      auto g2_bases = g2.mul_many(random_scalars(n, 4));
      g2_ms = median_ms(repeats, [&] { msm::msm<G2Curve>(std::span<const G2Affine>(g2_bases), scalars); });
    }
    fmt::print("{:>6} {:>12.1f} {:>14.1f} {:>14.1f}\n", lg, ntt_ms, g1_ms, g2_ms);
    std::fflush(stdout);
  }
}
