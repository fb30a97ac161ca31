#include "policy/device_memory.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/util/machine.hpp"

namespace zkpipe::policy {

std::uint64_t per_worker_bytes(const DeviceFootprint& f, bool key_on_device) {
  return f.worker_bytes + (key_on_device ? 0 : f.streaming_bytes);
}

std::uint64_t device_bytes(const DeviceFootprint& f, std::uint32_t workers, bool key_on_device) {
  return (key_on_device ? f.key_bytes : 0) + f.shared_bytes + std::uint64_t{workers} * per_worker_bytes(f, key_on_device);
}

namespace {

// The most workers, at most `asked`, that fit the budget (0 when none does).
std::uint32_t workers_fitting(const DeviceFootprint& f, std::uint64_t budget, std::uint32_t asked, bool key_on_device) {
  std::uint32_t workers = asked;
  while (workers > 0 && device_bytes(f, workers, key_on_device) > budget) --workers;
  return workers;
}

}  // namespace

DevicePlan plan_device_memory(const DeviceFootprint& f, std::uint64_t budget, std::uint32_t asked, bool key_on_device_asked) {
  if (asked == 0) throw std::invalid_argument("a GPU needs at least one worker");
  using zk::format_bytes;
  DevicePlan plan;
  plan.key_on_device = key_on_device_asked;
  plan.workers_per_gpu = workers_fitting(f, budget, asked, plan.key_on_device);
  if (plan.workers_per_gpu == 0 && plan.key_on_device) {
    plan.key_on_device = false;
    plan.workers_per_gpu = workers_fitting(f, budget, asked, false);
    plan.change = fmt::format("the key's points ({}) and one worker do not fit the device budget of {}: the points "
                              "stream from pinned host memory",
                              format_bytes(f.key_bytes), format_bytes(budget));
  }
  if (plan.workers_per_gpu == 0)
    throw std::invalid_argument(fmt::format(
        "the device budget of {} cannot hold one worker even with the key's points streamed from the host: the "
        "kernels' workspaces take {} and a worker {} (its buffers {} + base chunks {}); the key's points would take {} "
        "more on the device: raise the device budget or prove a smaller circuit",
        format_bytes(budget), format_bytes(f.shared_bytes), format_bytes(per_worker_bytes(f, false)),
        format_bytes(f.worker_bytes), format_bytes(f.streaming_bytes), format_bytes(f.key_bytes)));
  if (plan.workers_per_gpu < asked) {
    if (!plan.change.empty()) plan.change += "; ";
    plan.change += fmt::format("{} of the {} workers asked for fit the device budget of {} ({} each beside {} shared)",
                               plan.workers_per_gpu, asked, format_bytes(budget),
                               format_bytes(per_worker_bytes(f, plan.key_on_device)),
                               format_bytes(device_bytes(f, 0, plan.key_on_device)));
  }
  plan.bytes = device_bytes(f, plan.workers_per_gpu, plan.key_on_device);
  return plan;
}

void plan_fixed_bases(const DeviceFootprint& f, std::uint64_t budget, FixedBaseTables tables,
                      std::uint32_t partitions_per_gpu, DevicePlan& plan) {
  if (tables == FixedBaseTables::off || !plan.key_on_device) return;
  std::vector<FixedBaseOption> options = f.fixed_bases;
  std::ranges::stable_sort(options, std::greater{}, [](const FixedBaseOption& o) {
    return o.saving_s / double(std::max<std::uint64_t>(1, o.table_bytes + o.workspace_bytes));
  });
  std::uint64_t workspace_charged[2] = {0, 0};  // G1's, G2's
  for (const FixedBaseOption& option : options) {
    if (tables == FixedBaseTables::automatic && !(partitions_per_gpu * option.saving_s > option.build_s)) continue;
    std::uint64_t& charged = workspace_charged[in_g2(option.array)];
    const std::uint64_t more = option.table_bytes + std::max(option.workspace_bytes, charged) - charged;
    if (more > budget - std::min(budget, plan.bytes)) continue;
    plan.bytes += more;
    charged = std::max(charged, option.workspace_bytes);
    plan.fixed_bases.push_back(option.array);
  }
}

}  // namespace zkpipe::policy
