#include "policy/job_settings.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/util/json_number.hpp"
#include "engine/util/machine.hpp"

namespace zkpipe::policy {

using zk::format_bytes;

namespace {

// Slabs per pool when none are asked for: the partitions in flight spread over the pools, as many
// as the budget holds beside the key and the workers (at least one).
std::uint32_t default_pool_slabs(std::uint32_t in_flight, std::uint32_t pools, std::uint64_t partitions_fitting) {
  return std::uint32_t(std::max<std::uint64_t>(1, std::min<std::uint64_t>((in_flight + pools - 1) / pools,
                                                                          partitions_fitting / pools)));
}

}  // namespace

std::uint64_t fixed_host_bytes(const JobSettings& s, const JobShape& shape, std::uint32_t gpus) {
  return shape.key_bytes +
         std::uint64_t{gpus} * s.workers_per_gpu * shape.worker_host_bytes(s.staging.value_or(Staging::pageable));
}

JobSettings resolve_job_settings(JobSettings s, const JobShape& shape, const HostFacts& host, const SettingNames& names) {
  if (shape.partitions == 0) throw std::invalid_argument("a job needs at least one partition");
  if (shape.partition_host_bytes() == 0) throw std::invalid_argument("a partition holds no host bytes");
  if (s.workers_per_gpu == 0) throw std::invalid_argument(fmt::format("{} must be at least 1", names.workers));
  const std::uint32_t workers = host.gpus * s.workers_per_gpu;
  if (s.synthesis_threads == 0) s.synthesis_threads = std::max(1u, host.cores / 2);
  s.synthesis_threads = std::min(s.synthesis_threads, shape.partitions);
  if (s.partitions_in_flight == 0) s.partitions_in_flight = s.synthesis_threads + workers;
  s.partitions_in_flight = std::min(s.partitions_in_flight, shape.partitions);
  if (!s.staging) s.staging = host.can_pin ? Staging::pinned : Staging::pageable;

  const std::uint64_t fixed = fixed_host_bytes(s, shape, host.gpus);
  if (s.host_budget_bytes == 0) {
    if (host.available_memory_bytes == 0)
      throw std::invalid_argument(fmt::format("the memory available is unknown: give the host budget ({})", names.host_budget));
    // The key is loaded already, so the memory available no longer counts it.
    s.host_budget_bytes = shape.key_bytes + host.available_memory_bytes / 10 * 8;
  }
  if (s.host_budget_bytes < fixed + shape.partition_host_bytes())
    throw std::invalid_argument(fmt::format(
        "the host memory budget of {} cannot hold the proving key and workers' buffers ({}) and one partition ({}): "
        "raise the budget ({}), or use fewer workers ({})",
        format_bytes(double(s.host_budget_bytes)), format_bytes(double(fixed)),
        format_bytes(double(shape.partition_host_bytes())), names.host_budget, names.workers));
  const std::uint64_t partitions_fitting = (s.host_budget_bytes - fixed) / shape.partition_host_bytes();
  if (*s.staging == Staging::pageable) {
    s.pool_slabs = 0;
    return s;
  }
  const std::uint32_t pools = s.pool_layout == PoolLayout::per_gpu ? host.gpus : 1;
  if (s.pool_slabs == 0) s.pool_slabs = default_pool_slabs(s.partitions_in_flight, pools, partitions_fitting);
  if (std::uint64_t{s.pool_slabs} * pools > partitions_fitting)
    throw std::invalid_argument(fmt::format(
        "{} {}{}: the budget of {} holds {} partitions next to the key and workers' buffers; raise the budget ({}) "
        "or lower {}{}",
        names.pool_slabs, s.pool_slabs, pools > 1 ? fmt::format(" per GPU x {} GPUs", pools) : std::string(),
        format_bytes(double(s.host_budget_bytes)), partitions_fitting, names.host_budget, names.pool_slabs,
        pools > 1 ? fmt::format(" (or use {})", names.per_host_pools) : std::string()));
  return s;
}

PolicySettings policy_settings(const JobSettings& s, const JobShape& shape, std::uint32_t gpus) {
  PolicySettings p;
  p.partitions = shape.partitions;
  p.partition_host_bytes = shape.partition_host_bytes();
  const std::uint64_t fixed = fixed_host_bytes(s, shape, gpus);
  p.host_budget_bytes = s.host_budget_bytes > fixed ? s.host_budget_bytes - fixed : 0;
  p.partitions_in_flight_max = s.partitions_in_flight;
  p.staging = s.staging.value_or(Staging::pageable);
  p.pool_slabs = s.pool_slabs;
  p.pool_layout = s.pool_layout;
  p.gpus = gpus;
  p.workers_per_gpu = s.workers_per_gpu;
  p.retry_limit = s.retry_limit;
  return p;
}

DevicePlan fit_device_memory(JobSettings& s, const DeviceFootprint& footprint, std::uint32_t partitions_per_gpu) {
  const std::uint64_t budget = s.device_budget_bytes ? s.device_budget_bytes : UINT64_MAX;
  DevicePlan plan = plan_device_memory(footprint, budget, s.workers_per_gpu, s.srs_residency == SrsResidency::device);
  plan_fixed_bases(footprint, budget, s.fixed_bases, partitions_per_gpu, plan);
  s.workers_per_gpu = plan.workers_per_gpu;
  s.srs_residency = plan.key_on_device ? SrsResidency::device : SrsResidency::pinned_host;
  return plan;
}

void to_json(nlohmann::json& json, const JobSettings& s) {
  json = {{"synthesis_threads", s.synthesis_threads},
          {"partitions_in_flight", s.partitions_in_flight},
          {"staging", staging_name(s.staging.value_or(Staging::pageable))},
          {"pool_slabs", s.pool_slabs},
          {"pool_layout", pool_layout_name(s.pool_layout)},
          {"host_budget_bytes", s.host_budget_bytes},
          {"device_budget_bytes", s.device_budget_bytes},
          {"workers_per_gpu", s.workers_per_gpu},
          {"srs_residency", srs_residency_name(s.srs_residency)},
          {"fixed_bases", zk::name_of(fixed_base_tables_names, s.fixed_bases)},
          {"retry_limit", s.retry_limit}};
}

namespace {

template <typename Enum, std::size_t N>
Enum enum_or(const nlohmann::json& json, const char* key, Enum fallback, const zk::EnumNames<Enum, N>& names) {
  return zk::json_enum_or(json, "settings", key, fallback, names);
}

template <typename T>
T number_or(const nlohmann::json& json, const char* key, T fallback) {
  return zk::json_number_or(json, "settings", key, fallback);
}

}  // namespace

void from_json(const nlohmann::json& json, JobSettings& s) {
  const JobSettings defaults;
  s.synthesis_threads = number_or(json, "synthesis_threads", defaults.synthesis_threads);
  s.partitions_in_flight = number_or(json, "partitions_in_flight", defaults.partitions_in_flight);
  s.staging = json.contains("staging") ? std::optional(enum_or(json, "staging", Staging::pinned, staging_names))
                                       : std::nullopt;
  s.pool_slabs = number_or(json, "pool_slabs", defaults.pool_slabs);
  s.pool_layout = enum_or(json, "pool_layout", defaults.pool_layout, pool_layout_names);
  s.host_budget_bytes = number_or(json, "host_budget_bytes", defaults.host_budget_bytes);
  s.device_budget_bytes = number_or(json, "device_budget_bytes", defaults.device_budget_bytes);
  s.workers_per_gpu = number_or(json, "workers_per_gpu", defaults.workers_per_gpu);
  s.srs_residency = enum_or(json, "srs_residency", defaults.srs_residency, srs_residency_names);
  // A sidecar that names no setting predates the tables: its run built none.
  s.fixed_bases = enum_or(json, "fixed_bases", FixedBaseTables::off, fixed_base_tables_names);
  s.retry_limit = number_or(json, "retry_limit", defaults.retry_limit);
}

void to_json(nlohmann::json& json, const DeviceFootprint& f) {
  json = {{"key_bytes", f.key_bytes},
          {"shared_bytes", f.shared_bytes},
          {"worker_bytes", f.worker_bytes},
          {"streaming_bytes", f.streaming_bytes},
          {"fixed_bases", f.fixed_bases}};
}

void from_json(const nlohmann::json& json, DeviceFootprint& f) {
  f.key_bytes = zk::json_number_or(json, "settings.device_footprint", "key_bytes", std::uint64_t{0});
  f.shared_bytes = zk::json_number_or(json, "settings.device_footprint", "shared_bytes", std::uint64_t{0});
  f.worker_bytes = zk::json_number_or(json, "settings.device_footprint", "worker_bytes", std::uint64_t{0});
  f.streaming_bytes = zk::json_number_or(json, "settings.device_footprint", "streaming_bytes", std::uint64_t{0});
  f.fixed_bases = json.value("fixed_bases", std::vector<FixedBaseOption>{});
}

void to_json(nlohmann::json& json, KeyArray array) { json = key_array_name(array); }

void from_json(const nlohmann::json& json, KeyArray& array) {
  const auto name = json.is_string() ? zk::value_of(key_array_names, json.get<std::string>()) : std::nullopt;
  if (!name)
    throw std::invalid_argument(fmt::format("{}: expected one of {}", json.dump(), zk::joined_names(key_array_names, ", ", "\"")));
  array = *name;
}

void to_json(nlohmann::json& json, const FixedBaseOption& o) {
  json = {{"array", o.array},
          {"table_bytes", o.table_bytes},
          {"workspace_bytes", o.workspace_bytes},
          {"build_s", o.build_s},
          {"saving_s", o.saving_s}};
}

void from_json(const nlohmann::json& json, FixedBaseOption& o) {
  o.array = zk::json_enum_or(json, "settings.device_footprint.fixed_bases", "array", KeyArray::a, key_array_names);
  o.table_bytes = zk::json_number_or(json, "settings.device_footprint.fixed_bases", "table_bytes", std::uint64_t{0});
  o.workspace_bytes = zk::json_number_or(json, "settings.device_footprint.fixed_bases", "workspace_bytes", std::uint64_t{0});
  o.build_s = zk::json_number_or(json, "settings.device_footprint.fixed_bases", "build_s", 0.0);
  o.saving_s = zk::json_number_or(json, "settings.device_footprint.fixed_bases", "saving_s", 0.0);
}

}  // namespace zkpipe::policy
