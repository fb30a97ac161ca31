#include "policy/device_memory.hpp"

#include <algorithm>
#include <array>
#include <span>
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

namespace {

// What the tables `taken` add to a plan: their bytes, and the largest workspace each curve's take.
std::uint64_t bytes_added(std::span<const FixedBaseOption* const> taken) {
  std::uint64_t bytes = 0, workspace[2] = {0, 0};  // G1's, G2's
  for (const FixedBaseOption* option : taken) {
    bytes += option->table_bytes;
    std::uint64_t& charged = workspace[in_g2(option->table.array)];
    charged = std::max(charged, option->workspace_bytes);
  }
  return bytes + workspace[0] + workspace[1];
}

double saving(std::span<const FixedBaseOption* const> taken) {
  double total = 0;
  for (const FixedBaseOption* option : taken) total += option->saving_s;
  return total;
}

// Whether the tables of the arrays that take the whole witness have one number of sets.
bool one_witness_layout(std::span<const FixedBaseOption* const> taken) {
  std::uint32_t sets = 0;
  for (const FixedBaseOption* option : taken) {
    if (!takes_whole_witness(option->table.array)) continue;
    if (sets != 0 && sets != option->table.sets) return false;
    sets = option->table.sets;
  }
  return true;
}

}  // namespace

void plan_fixed_bases(const DeviceFootprint& f, std::uint64_t budget, FixedBaseTables tables,
                      std::uint32_t partitions_per_gpu, DevicePlan& plan) {
  if (tables == FixedBaseTables::off || !plan.key_on_device) return;
  std::array<std::vector<const FixedBaseOption*>, key_array_names.size()> by_array;
  for (const FixedBaseOption& option : f.fixed_bases)
    if (may_build(option, tables, partitions_per_gpu))
      by_array[std::size_t(option.table.array)].push_back(&option);
  const std::uint64_t room = budget - std::min(budget, plan.bytes);
  std::vector<const FixedBaseOption*> taken, best;
  // Every choice of none or one option an array (at most 3^5 with two options an array).
  const auto choose = [&](auto& self, std::size_t array) -> void {
    if (bytes_added(taken) > room) return;
    if (array == by_array.size()) {
      const double gain = saving(taken), best_gain = saving(best);
      if (one_witness_layout(taken) && (gain > best_gain || (gain == best_gain && bytes_added(taken) < bytes_added(best))))
        best = taken;
      return;
    }
    self(self, array + 1);
    for (const FixedBaseOption* option : by_array[array]) {
      taken.push_back(option);
      self(self, array + 1);
      taken.pop_back();
    }
  };
  choose(choose, 0);
  plan.bytes += bytes_added(best);
  for (const FixedBaseOption* option : best) plan.fixed_bases.push_back(option->table);
}

}  // namespace zkpipe::policy
