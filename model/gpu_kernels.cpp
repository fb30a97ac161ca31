#include "gpu_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace zkpipe::model {

MsmScalars scalars_of_z(const Workload& workload) {
  const double scalars = double(workload.z_length());
  auto count = [&](double share) { return std::uint64_t(std::max(0LL, std::llround(scalars * share))); };
  return {count(workload.one_scalar_share), count(1 - workload.zero_scalar_share - workload.one_scalar_share)};
}

MsmScalars scalars_of_witness(const Workload& workload) {
  const MsmScalars z = scalars_of_z(workload);
  return {z.ones - std::min<std::uint64_t>(z.ones, 1),
          z.significant - std::min<std::uint64_t>(z.significant, workload.public_inputs)};
}

std::vector<GpuKernel> gpu_kernels(const Workload& workload, const std::map<trace::Phase, PhaseCost>& costs) {
  using trace::Phase;
  const MsmScalars z = scalars_of_z(workload), witness = scalars_of_witness(workload);
  std::vector<std::pair<Phase, std::uint64_t>> order{{Phase::ntt, workload.domain_size()},
                                                      {Phase::msm_h, workload.domain_size()}};
  if (costs.contains(Phase::tail_msm)) {
    order.insert(order.end(), {{Phase::batch_add, 3 * z.ones + witness.ones},
                               {Phase::tail_msm, 2 * z.significant + witness.significant},
                               {Phase::msm_b2, z.significant}});
  } else {
    for (const auto& [msm, scalars] :
         {std::pair{Phase::msm_a, z}, {Phase::msm_b1, z}, {Phase::msm_l, witness}, {Phase::msm_b2, z}})
      order.insert(order.end(), {{Phase::batch_add, scalars.ones}, {msm, scalars.significant}});
  }
  std::vector<GpuKernel> kernels;
  for (const auto& [phase, items] : order)
    if (const auto cost = costs.find(phase); cost != costs.end())
      kernels.push_back({phase, items, cost->second.seconds(items)});
  return kernels;
}

}  // namespace zkpipe::model
