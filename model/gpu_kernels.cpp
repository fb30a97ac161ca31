#include "gpu_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <tuple>
#include <utility>

namespace zkpipe::model {

namespace {

// The key's bases of one MSM.
struct MsmBases {
  std::uint64_t points = 0;
  std::uint64_t point_bytes = 0;
};

// What one kernel does: its phase, its items and the MSM bases it reads.
struct KernelShape {
  trace::Phase phase;
  std::uint64_t items = 0;
  std::vector<MsmBases> bases;
};

// The bases of each MSM that has scalars of the kind a kernel works on (ones, or significant):
// pairs of those scalars' count and the MSM's bases.
std::vector<MsmBases> read_where_scalars(std::initializer_list<std::pair<std::uint64_t, MsmBases>> msms) {
  std::vector<MsmBases> read;
  for (const auto& [scalars, bases] : msms)
    if (scalars > 0) read.push_back(bases);
  return read;
}

GpuKernel kernel_of(const KernelShape& shape, const PhaseCost& cost, std::uint64_t chunk_points) {
  GpuKernel kernel{shape.phase, shape.items, cost.seconds(shape.items), {}, 0, 0};
  for (const MsmBases& bases : shape.bases)
    for (std::uint64_t begin = 0; begin < bases.points; begin += chunk_points) {
      const std::uint64_t points = std::min(chunk_points, bases.points - begin);
      kernel.base_chunks.push_back({points, points * bases.point_bytes});
      kernel.base_points += points;
    }
  if (!kernel.base_chunks.empty()) kernel.chunk_s = cost.stream_chunk_s.value_or(default_stream_chunk_s(shape.phase));
  return kernel;
}

}  // namespace

double default_stream_chunk_s(trace::Phase phase) {
  using trace::Phase;
  switch (phase) {
    case Phase::msm_h: return 0.0109;
    case Phase::batch_add: return 0.0078;
    case Phase::msm_a: case Phase::tail_msm: return 0.0126;
    case Phase::msm_b1: return 0.0141;
    case Phase::msm_l: return 0.0127;
    case Phase::msm_b2: return 0.0292;
    default: return 0;
  }
}

double streamed_kernel_s(std::span<const double> work_s, std::span<const double> copy_s) {
  if (work_s.empty()) return 0;
  double copied_s = copy_s[0], worked_s = copy_s[0];
  for (std::size_t chunk = 0; chunk < work_s.size(); ++chunk) {
    const double start_s = std::max(copied_s, worked_s);
    worked_s = start_s + work_s[chunk];
    if (chunk + 1 < work_s.size()) copied_s = start_s + copy_s[chunk + 1];
  }
  return worked_s;
}

MsmScalars scalars_of_z(const Workload& workload) {
  const double scalars = double(workload.z_length());
  auto count = [&](double share) { return std::uint64_t(std::max(0LL, std::llround(scalars * share))); };
  return {count(workload.one_scalar_share), count(1 - workload.zero_scalar_share - workload.one_scalar_share)};
}

MsmScalars scalars_of_b(const Workload& workload) {
  const MsmScalars z = scalars_of_z(workload);
  const double scalars = double(workload.z_length());
  const auto absent = [&](double share, std::uint64_t most) {
    return std::min(most, std::uint64_t(std::max(0LL, std::llround(scalars * share))));
  };
  return {z.ones - absent(workload.b_absent_one_share, z.ones),
          z.significant - absent(workload.b_absent_significant_share, z.significant)};
}

MsmScalars scalars_of_witness(const Workload& workload) {
  const MsmScalars z = scalars_of_z(workload);
  const std::uint64_t public_significant = workload.public_inputs - workload.public_inputs_one - workload.public_inputs_zero;
  return {z.ones - std::min<std::uint64_t>(z.ones, 1 + workload.public_inputs_one),
          z.significant - std::min(z.significant, public_significant)};
}

std::vector<GpuKernel> gpu_kernels(const Workload& workload, const std::map<trace::Phase, PhaseCost>& costs) {
  using trace::Phase;
  const MsmScalars z = scalars_of_z(workload), b = scalars_of_b(workload), witness = scalars_of_witness(workload);
  const MsmBases z_g1{workload.z_length(), policy::g1_point_bytes}, z_g2{workload.z_length(), policy::g2_point_bytes};
  const MsmBases witness_g1{workload.z_length() - std::min(workload.z_length(), 1 + std::uint64_t{workload.public_inputs}),
                            policy::g1_point_bytes};
  std::vector<KernelShape> order{{Phase::ntt, workload.domain_size(), {}},
                                 {Phase::msm_h, workload.domain_size(), {{workload.domain_size(), policy::g1_point_bytes}}}};
  if (costs.contains(Phase::tail_msm)) {
    order.insert(order.end(),
                 {{Phase::batch_add, z.ones + 2 * b.ones + witness.ones,
                   read_where_scalars({{z.ones, z_g1}, {b.ones, z_g1}, {witness.ones, witness_g1}, {b.ones, z_g2}})},
                  {Phase::tail_msm, z.significant + b.significant + witness.significant,
                   read_where_scalars({{z.significant, z_g1}, {b.significant, z_g1}, {witness.significant, witness_g1}})},
                  {Phase::msm_b2, b.significant, read_where_scalars({{b.significant, z_g2}})}});
  } else {
    for (const auto& [msm, scalars, bases] : {std::tuple{Phase::msm_a, z, z_g1}, {Phase::msm_b1, b, z_g1},
                                              {Phase::msm_l, witness, witness_g1}, {Phase::msm_b2, b, z_g2}})
      order.insert(order.end(), {{Phase::batch_add, scalars.ones, read_where_scalars({{scalars.ones, bases}})},
                                 {msm, scalars.significant, read_where_scalars({{scalars.significant, bases}})}});
  }
  std::vector<GpuKernel> kernels;
  for (const KernelShape& shape : order)
    if (const auto cost = costs.find(shape.phase); cost != costs.end())
      kernels.push_back(kernel_of(shape, cost->second, workload.stream_chunk_points));
  return kernels;
}

}  // namespace zkpipe::model
