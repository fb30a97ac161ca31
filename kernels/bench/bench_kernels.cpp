// bench_kernels — times the CUDA NTT and G1/G2 MSMs from 2^lg_min to 2^lg_max with CUDA events
// (median of --repeats runs after --warmup runs, inputs device-resident; an MSM's time runs until
// its result is on the host, as a caller sees it), prints the NTT's fraction of the device-memory
// floor (one read and one write of the data at the measured device-to-device copy bandwidth),
// times its inverse, coset and quotient-chain paths beside it and each MSM size's batch addition
// (the sum of as many bases at random positions), optionally times MSMs over
// fixed-base tables (--fixed-base: the table built once, its build timed apart), sweeps MSM
// window widths (--sweep-windows) to choose GpuMsmPolicy, and times the field products alone
// (--products: chains of products and of squares in a full grid) and the point additions alone
// (--additions: XYZZ chains against affine additions sharing an inversion a batch). Prints a table
// and writes CSV rows to --csv.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/util/rng.hpp"
#include "kernels/ec/addition_runs_cuda.cuh"
#include "kernels/ff/product_chains_cuda.cuh"
#include "kernels/msm/pippenger_cuda.cuh"
#include "kernels/msm/sample_points.hpp"
#include "kernels/ntt/ntt_cuda.cuh"

namespace {

using namespace zk;
using bls12_381::Fr;

struct Options {
  int ntt_min = 16, ntt_max = 26, msm_min = 16, msm_max = 26, g2_max = 24;
  int warmup = 2, repeats = 7;
  std::vector<int> sweep_sizes;  // lg sizes at which to sweep window widths
  bool fixed_base = false;       // also time MSMs over fixed-base tables (built once, timed apart)
  bool products = false;         // also time the field products alone
  bool additions = false;        // also time the point additions alone
  std::string csv = "bench_kernels.csv";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    auto value = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_kernels: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    std::string a = argv[i];
    if (a == "--ntt") std::sscanf(value().c_str(), "%d:%d", &o.ntt_min, &o.ntt_max);
    else if (a == "--msm") std::sscanf(value().c_str(), "%d:%d", &o.msm_min, &o.msm_max);
    else if (a == "--g2-max") o.g2_max = std::stoi(value());
    else if (a == "--repeats") o.repeats = std::stoi(value());
    else if (a == "--warmup") o.warmup = std::stoi(value());
    else if (a == "--sweep-windows") {
      std::string list = value();
      for (size_t p = 0; p < list.size();) {
        size_t q = list.find(',', p);
        o.sweep_sizes.push_back(std::stoi(list.substr(p, q - p)));
        p = q == std::string::npos ? list.size() : q + 1;
      }
    } else if (a == "--fixed-base") o.fixed_base = true;
    else if (a == "--products") o.products = true;
    else if (a == "--additions") o.additions = true;
    else if (a == "--csv") o.csv = value();
    else {
      std::fprintf(stderr,
                   "usage: bench_kernels [--ntt MIN:MAX] [--msm MIN:MAX] [--g2-max LG] [--repeats N] "
                   "[--warmup N] [--sweep-windows LG,LG,...] [--fixed-base] [--products] [--additions] [--csv FILE]\n");
      std::exit(2);
    }
  }
  return o;
}

// Median milliseconds of `run` (which enqueues work on `stream`) over repeats, after warm-ups.
template <class Run>
double median_ms(const Options& o, cudaStream_t stream, Run&& run) {
  cuda::CudaEvent start, stop;
  std::vector<double> times;
  for (int i = 0; i < o.warmup + o.repeats; ++i) {
    start.record(stream);
    run();
    stop.record(stream);
    double ms = stop.elapsed_ms_since(start);
    if (i >= o.warmup) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Device-to-device copy bandwidth in GB/s, counting bytes read plus bytes written.
double copy_gbps(const Options& o, cudaStream_t stream) {
  const size_t bytes = size_t{2} << 30;
  cuda::DeviceBuffer<uint8_t> a(bytes), b(bytes);
  CUDA_OK(cudaMemsetAsync(a.get(), 1, bytes, stream));
  double ms = median_ms(o, stream, [&] { CUDA_OK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream)); });
  return 2.0 * bytes / (ms * 1e6);
}

// n random field elements, drawn in parallel from `seed` (the same for any thread count).
template <class F>
std::vector<F> random_elements(size_t n, uint64_t seed) {
  std::vector<F> v(n);
  parallel_for(n, [&](size_t b, size_t e) {
    Rng rng(seed + b);
    for (size_t i = b; i < e; ++i) v[i] = rng.field<F>();
  }, 1 << 16);
  return v;
}

// Field products alone: chains of 64 dependent products in 8 waves of full SMs, each kind's
// median time and products per nanosecond, beside the first kind (Fp's product).
void time_field_products(const Options& o, const cudaDeviceProp& prop, cudaStream_t stream, FILE* csv) {
  constexpr int steps = 64;
  const size_t threads = size_t(prop.multiProcessorCount) * prop.maxThreadsPerMultiProcessor * 8;
  ff::ProductChains chains(random_elements<bls12_381::Fp>(2 * threads, 3), random_elements<Fr>(2 * threads, 4), steps);
  std::printf("\nfield products: %zu chains of %d\n", threads, steps);
  double fp_mul_rate = 0;
  for (const ff::ProductKind kind : ff::kProductKinds) {
    const double ms = median_ms(o, stream, [&] { chains.run(kind, stream); });
    const double per_ns = double(chains.products()) / (ms * 1e6);
    if (kind == ff::ProductKind::fp_mul) fp_mul_rate = per_ns;
    const std::string name(ff::product_kind_name(kind));
    std::printf("  %-8s %8.3f ms  %7.2f products/ns  (%.2fx fp_mul)\n", name.c_str(), ms, per_ns, per_ns / fp_mul_rate);
    std::fprintf(csv, "products_%s,0,0,%.4f\n", name.c_str(), ms);
  }
}


// Point additions alone (ec::AdditionRuns), 2^25 of each form over 2^22 sample points: XYZZ chains
// of 128 (the accumulation's chunk) against affine additions sharing one inversion a batch of 16
// to 256, each form's median time and additions per ns.
template <class Curve>
void time_additions(const Options& o, const ec::affine_t<Curve>& generator, cudaStream_t stream, FILE* csv,
                    const char* group) {
  constexpr uint32_t m = 1u << 22;
  constexpr size_t additions = size_t{1} << 25;
  cuda::DeviceBuffer<ec::affine_t<Curve>> d_points(m);
  d_points.upload(msm::sample_points<Curve>(m, generator, 13), stream);
  ec::AdditionRuns<Curve> runs(d_points.get(), m, additions);
  std::printf("\n%s additions: 2^25 over 2^22 points\n", group);
  const double chain_ms = median_ms(o, stream, [&] { runs.run_xyzz(128, stream); });
  std::printf("  xyzz chains of 128      %8.3f ms  %6.3f additions/ns\n", chain_ms, additions / (chain_ms * 1e6));
  std::fprintf(csv, "additions_%s_xyzz,25,128,%.4f\n", group, chain_ms);
  for (int batch : {16, 32, 64, 128, 256}) {
    const double ms = median_ms(o, stream, [&] { runs.run_affine(batch, stream); });
    std::printf("  affine, batches of %-4d %8.3f ms  %6.3f additions/ns  (%.2fx the chains')\n", batch, ms,
                additions / (ms * 1e6), chain_ms / ms);
    std::fprintf(csv, "additions_%s_affine,25,%d,%.4f\n", group, batch, ms);
  }
}

// The median of `run` at 2^lg with c-bit windows, also written to the CSV as a `kernel` row.
template <class Run>
double median_ms_row(const Options& o, cudaStream_t stream, FILE* csv, const std::string& kernel, int lg, int c,
                     Run&& run) {
  const double ms = median_ms(o, stream, run);
  std::fprintf(csv, "%s,%d,%d,%.4f\n", kernel.c_str(), lg, c, ms);
  return ms;
}

// The NTT at 2^lg forward, inverse and on a coset, and the prover's quotient chain (for each of
// a, b, c an iNTT and a coset NTT, then a b - c) as one figure, from `source`'s values; prints a
// line, writes CSV rows, returns the forward NTT's median.
double time_ntt_paths(const Options& o, ntt::CudaNtt& gpu_ntt, const Fr* source, Fr* data, Fr* abc, int lg,
                      cudaStream_t stream, FILE* csv) {
  const ntt::Domain domain(lg);
  const size_t n = domain.n;
  for (Fr* v : {data, abc, abc + n, abc + 2 * n})
    CUDA_OK(cudaMemcpyAsync(v, source, n * sizeof(Fr), cudaMemcpyDeviceToDevice, stream));
  const Fr shift = Fr::from_u64(7);
  const double forward = median_ms_row(o, stream, csv, "ntt", lg, 0, [&] { gpu_ntt.ntt(data, domain, stream); });
  const double inverse = median_ms_row(o, stream, csv, "intt", lg, 0, [&] { gpu_ntt.intt(data, domain, stream); });
  const double coset = median_ms_row(o, stream, csv, "coset_ntt", lg, 0, [&] { gpu_ntt.coset_ntt(data, domain, shift, stream); });
  const double quotient = median_ms_row(o, stream, csv, "quotient", lg, 0, [&] {
    gpu_ntt.quotient_evaluations(abc, abc + n, abc + 2 * n, domain, stream);
  });
  std::printf("  NTT 2^%d: forward %.3f ms, inverse %.3f, coset %.3f; the quotient's chain %.3f (%.2f forward NTTs)\n",
              lg, forward, inverse, coset, quotient, quotient / forward);
  return forward;
}

// MSMs over fixed-base tables of the first 2^lg_max bases at the policy's window (built once, the
// build timed apart): a row for every window (one bucket set), then every other window's row (two
// sets, half the bytes); then, at each --sweep-windows size, tables of other widths.
template <class Curve>
void time_fixed_base_msms(const Options& o, int lg_min, int lg_max, const cuda::DeviceBuffer<ec::affine_t<Curve>>& d_bases,
                          const cuda::DeviceBuffer<Fr>& d_scalars, cudaStream_t stream, FILE* csv, const char* group) {
  msm::CudaMsm<Curve> gpu;
  auto timed_table = [&](size_t n, int c, int sets) {
    auto table = std::make_unique<msm::CudaFixedBases<Curve>>();
    cuda::CudaEvent start, stop;
    start.record(stream);
    table->build(d_bases.get(), n, stream, c, sets);
    stop.record(stream);
    std::printf("  %s fixed-base table of 2^%d bases, window %d, %d bucket set(s): %.2f GiB, built in %.1f ms\n", group,
                int(std::bit_width(n) - 1), table->window_bits(), table->sets(), table->bytes() / double(1 << 30),
                stop.elapsed_ms_since(start));
    return table;
  };
  for (const int sets : {1, 2}) {
    const auto table = timed_table(size_t{1} << lg_max, 0, sets);
    const std::string name = std::string("msm_") + group + (sets == 1 ? "_fixed_base" : "_fixed_base_2sets");
    for (int lg = lg_min; lg <= lg_max; ++lg) {
      const size_t n = size_t{1} << lg;
      const double t = median_ms_row(o, stream, csv, name, lg, table->window_bits(),
                                     [&] { gpu.msm(*table, nullptr, d_scalars.get(), n, stream); });
      std::printf("  %s fixed-base MSM 2^%d, %d set(s): %.3f ms (window %d)\n", group, lg, sets, t, table->window_bits());
      std::fflush(stdout);
    }
  }
  for (int lg : o.sweep_sizes) {
    if (lg > lg_max) continue;
    const size_t n = size_t{1} << lg;
    std::printf("  window sweep, %s fixed-base MSM 2^%d:", group, lg);
    for (int c = std::max(6, lg - 8); c <= std::min(msm::GpuMsmPolicy::max_window_bits, lg); ++c) {
      const auto table = timed_table(n, c, 1);
      const double t = median_ms_row(o, stream, csv, std::string("msm_") + group + "_fixed_base_window", lg, c,
                                     [&] { gpu.msm(*table, nullptr, d_scalars.get(), n, stream); });
      std::printf("    c=%d %.2f ms\n", c, t);
      std::fflush(stdout);
    }
  }
}

template <class Curve>
std::vector<double> time_msms(const Options& o, int lg_min, int lg_max, const ec::affine_t<Curve>& generator,
                              const cuda::DeviceBuffer<Fr>& d_scalars, cudaStream_t stream, FILE* csv,
                              const char* group) {
  std::vector<double> ms(lg_max + 1, 0.0);
  if (lg_max < lg_min) return ms;
  const size_t n_max = size_t{1} << lg_max;
  auto bases = msm::sample_points<Curve>(n_max, generator, 11);
  cuda::DeviceBuffer<ec::affine_t<Curve>> d_bases(n_max);
  d_bases.upload(bases, stream);
  msm::CudaMsm<Curve> gpu;
  std::printf("%s MSM: device workspace at 2^%d: %.2f GiB (bases %.2f GiB)\n", group, lg_max,
              msm::CudaMsm<Curve>::workspace_bytes(n_max) / double(1 << 30), d_bases.bytes() / double(1 << 30));
  // The batch addition's bases at random positions, as the prover's ones select them.
  std::vector<uint32_t> positions(n_max);
  Rng rng(13);
  for (auto& p : positions) p = uint32_t(rng.below(n_max));
  cuda::DeviceBuffer<uint32_t> d_positions(n_max);
  d_positions.upload(positions, stream);
  for (int lg = lg_min; lg <= lg_max; ++lg) {
    const size_t n = size_t{1} << lg;
    ms[lg] = median_ms_row(o, stream, csv, std::string("msm_") + group, lg, msm::GpuMsmPolicy::window_bits(n),
                           [&] { gpu.msm(d_bases.get(), nullptr, d_scalars.get(), n, stream); });
    std::printf("  %s MSM 2^%d: %.3f ms (window %d)\n", group, lg, ms[lg], msm::GpuMsmPolicy::window_bits(n));
    const double sum_ms = median_ms_row(o, stream, csv, std::string("batch_add_") + group, lg, 0,
                                        [&] { gpu.sum(d_bases.get(), d_positions.get(), n, stream); });
    std::printf("  %s batch addition 2^%d: %.3f ms (%.3f additions/ns)\n", group, lg, sum_ms, n / (sum_ms * 1e6));
    std::fflush(stdout);
  }
  for (int lg : o.sweep_sizes) {
    if (lg > lg_max) continue;
    const size_t n = size_t{1} << lg;
    std::printf("  window sweep, %s MSM 2^%d:", group, lg);
    for (int c = std::max(6, lg - 10); c <= std::min(msm::GpuMsmPolicy::max_window_bits, lg); ++c) {
      const double t = median_ms_row(o, stream, csv, std::string("msm_") + group + "_window", lg, c,
                                     [&] { gpu.msm(d_bases.get(), nullptr, d_scalars.get(), n, stream, c); });
      std::printf(" c=%d %.2f", c, t);
      std::fflush(stdout);
    }
    std::printf(" ms\n");
  }
  if (o.fixed_base) time_fixed_base_msms<Curve>(o, lg_min, lg_max, d_bases, d_scalars, stream, csv, group);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (cuda::cuda_device_count() == 0) {
    std::fprintf(stderr, "bench_kernels: no CUDA device found\n");
    return 1;
  }
  try {
    cudaDeviceProp prop{};
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs, %.1f GiB\n", prop.name, prop.multiProcessorCount,
                prop.totalGlobalMem / double(1 << 30));
    FILE* csv = std::fopen(o.csv.c_str(), "w");
    if (!csv) throw std::runtime_error("cannot write " + o.csv);
    std::fprintf(csv, "kernel,lg_n,window_bits,median_ms\n");
    cuda::CudaStream stream;
    const double gbps = copy_gbps(o, stream.get());
    std::printf("device-to-device copy: %.0f GB/s (read + write)\n", gbps);
    std::fprintf(csv, "d2d_copy_gbps,0,0,%.1f\n", gbps);
    if (o.products) time_field_products(o, prop, stream.get(), csv);
    if (o.additions) {
      time_additions<bls12_381::G1Curve>(o, bls12_381::g1_generator(), stream.get(), csv, "g1");
      time_additions<bls12_381::G2Curve>(o, bls12_381::g2_generator(), stream.get(), csv, "g2");
    }

    const int lg_scalars = std::max({o.ntt_max, o.msm_max, 1});
    const size_t n_scalars = size_t{1} << lg_scalars;
    auto host = random_elements<Fr>(n_scalars, 5);
    cuda::DeviceBuffer<Fr> d_scalars(n_scalars), d_ntt(size_t{1} << o.ntt_max);
    d_scalars.upload(host, stream.get());

    std::vector<double> ntt_ms(31, 0.0), ntt_floor(31, 0.0);
    ntt::CudaNtt gpu_ntt;
    std::printf("NTT workspace at 2^%d: %.2f GiB\n", o.ntt_max, ntt::CudaNtt::workspace_bytes(o.ntt_max) / double(1 << 30));
    cuda::DeviceBuffer<Fr> d_abc(3 * (size_t{1} << o.ntt_max));
    for (int lg = o.ntt_min; lg <= o.ntt_max; ++lg) {
      ntt_ms[lg] = time_ntt_paths(o, gpu_ntt, d_scalars.get(), d_ntt.get(), d_abc.get(), lg, stream.get(), csv);
      ntt_floor[lg] = 2.0 * (size_t{1} << lg) * sizeof(Fr) / (gbps * 1e6);
    }
    auto g1 = time_msms<bls12_381::G1Curve>(o, o.msm_min, o.msm_max, bls12_381::g1_generator(), d_scalars,
                                            stream.get(), csv, "g1");
    auto g2 = time_msms<bls12_381::G2Curve>(o, o.msm_min, std::min(o.msm_max, o.g2_max), bls12_381::g2_generator(),
                                            d_scalars, stream.get(), csv, "g2");
    std::fclose(csv);

    std::printf("\n%-6s %10s %9s %10s %10s %8s\n", "size", "NTT ms", "NTT/floor", "G1 MSM ms", "G2 MSM ms", "window");
    for (int lg = std::min(o.ntt_min, o.msm_min); lg <= std::max(o.ntt_max, o.msm_max); ++lg) {
      std::printf("2^%-4d %10.3f %8.0f%% %10.2f %10.2f %8d\n", lg, ntt_ms[lg],
                  ntt_ms[lg] > 0 ? 100.0 * ntt_floor[lg] / ntt_ms[lg] : 0.0, lg < int(g1.size()) ? g1[lg] : 0.0,
                  lg < int(g2.size()) ? g2[lg] : 0.0, msm::GpuMsmPolicy::window_bits(size_t{1} << lg));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_kernels: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
