#include "policy/job_settings.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/util/json_fields.hpp"
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
        format_bytes(s.host_budget_bytes), format_bytes(fixed), format_bytes(shape.partition_host_bytes()), names.host_budget,
        names.workers));
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
        format_bytes(s.host_budget_bytes), partitions_fitting, names.host_budget, names.pool_slabs,
        pools > 1 ? fmt::format(" (or use {})", names.per_host_pools) : std::string()));
  return s;
}

PolicySettings policy_settings(const JobSettings& s, const JobShape& shape, std::uint32_t gpus) {
  const std::uint64_t fixed = fixed_host_bytes(s, shape, gpus);
  return {.partitions = shape.partitions,
          .partition_host_bytes = shape.partition_host_bytes(),
          .host_budget_bytes = s.host_budget_bytes > fixed ? s.host_budget_bytes - fixed : 0,
          .partitions_in_flight_max = s.partitions_in_flight,
          .staging = s.staging.value_or(Staging::pageable),
          .pool_slabs = s.pool_slabs,
          .pool_layout = s.pool_layout,
          .gpus = gpus,
          .workers_per_gpu = s.workers_per_gpu,
          .retry_limit = s.retry_limit};
}

DevicePlan fit_device_memory(JobSettings& s, const DeviceFootprint& footprint, std::uint32_t partitions_per_gpu) {
  const std::uint64_t budget = s.device_budget_bytes ? s.device_budget_bytes : UINT64_MAX;
  DevicePlan plan = plan_device_memory(footprint, budget, s.workers_per_gpu, s.srs_residency == SrsResidency::device);
  plan_fixed_bases(footprint, budget, s.fixed_bases, partitions_per_gpu, plan);
  s.workers_per_gpu = plan.workers_per_gpu;
  s.srs_residency = plan.key_on_device ? SrsResidency::device : SrsResidency::pinned_host;
  return plan;
}

namespace {

#define FIELD(name) visit(#name, s.name)
template <typename Settings, typename Visit>  // Settings: JobSettings, const or not
void settings_fields(Settings& s, Visit visit) {
  FIELD(synthesis_threads), FIELD(partitions_in_flight), visit("staging", s.staging, staging_names), FIELD(pool_slabs);
  visit("pool_layout", s.pool_layout, pool_layout_names), FIELD(host_budget_bytes), FIELD(device_budget_bytes);
  FIELD(workers_per_gpu), visit("srs_residency", s.srs_residency, srs_residency_names);
  visit("fixed_bases", s.fixed_bases, fixed_base_tables_names), FIELD(retry_limit);
}

template <typename Footprint, typename Visit>  // Footprint: DeviceFootprint, const or not
void footprint_fields(Footprint& s, Visit visit) {
  FIELD(key_bytes), FIELD(shared_bytes), FIELD(worker_bytes), FIELD(streaming_bytes), FIELD(fixed_bases);
}

template <typename Option, typename Visit>  // Option: FixedBaseOption, const or not
void option_fields(Option& s, Visit visit) {
  visit("array", s.table.array, key_array_names), visit("sets", s.table.sets), FIELD(table_bytes), FIELD(workspace_bytes), FIELD(build_s), FIELD(saving_s);
}
#undef FIELD

void require_sets(std::uint32_t sets, std::string_view where) {
  if (sets == 0) throw std::invalid_argument(fmt::format("{}.sets: 0, where a fixed-base table has at least one bucket set", where));
}

}  // namespace

void to_json(nlohmann::json& json, const JobSettings& s) {
  settings_fields(s, zk::JsonFieldWriter{json = nlohmann::json::object()});
}

void from_json(const nlohmann::json& json, JobSettings& s) {
  s = JobSettings{.fixed_bases = FixedBaseTables::off};  // a sidecar that names no setting predates the tables
  settings_fields(s, zk::JsonFieldReader{json, "settings"});
}

void to_json(nlohmann::json& json, const DeviceFootprint& f) {
  footprint_fields(f, zk::JsonFieldWriter{json = nlohmann::json::object()});
}
void from_json(const nlohmann::json& json, DeviceFootprint& f) {
  footprint_fields(f = {}, zk::JsonFieldReader{json, "settings.device_footprint"});
}

void to_json(nlohmann::json& json, KeyArray array) { json = key_array_name(array); }

void from_json(const nlohmann::json& json, KeyArray& array) { array = zk::json_enum(json, key_array_names); }

void to_json(nlohmann::json& json, const FixedBaseOption& o) {
  option_fields(o, zk::JsonFieldWriter{json = nlohmann::json::object()});
}
void from_json(const nlohmann::json& json, FixedBaseOption& o) {
  option_fields(o = {}, zk::JsonFieldReader{json, "settings.device_footprint.fixed_bases"});
  require_sets(o.table.sets, "settings.device_footprint.fixed_bases");
}

void to_json(nlohmann::json& json, const FixedBaseTable& table) {
  json = {{"array", key_array_name(table.array)}, {"sets", table.sets}};
}
void from_json(const nlohmann::json& json, FixedBaseTable& table) {
  if (json.is_string()) {
    table = {json.get<KeyArray>(), 1};
    return;
  }
  table = {};
  const zk::JsonFieldReader read{json, "settings.fixed_base_tables", true};
  read("array", table.array, key_array_names), read("sets", table.sets);
  require_sets(table.sets, "settings.fixed_base_tables");
}

}  // namespace zkpipe::policy
