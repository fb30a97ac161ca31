// The job settings shared by the engine and the model: the defaults each chooses, the refusals
// naming the caller's own spelling of a setting, the budget the policy admits partitions against,
// resolution as a fixed point, and the sidecar's JSON both ways.
#include "policy/job_settings.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <stdexcept>
#include <string>

namespace zkpipe::policy {
namespace {

constexpr std::uint64_t mib = 1ull << 20;
constexpr std::uint64_t gib = 1ull << 30;

JobShape shape_of(std::uint32_t partitions) {
  return {{partitions, 96 * mib, 32 * mib, 2 * gib}, 300 * mib, 200 * mib};
}

std::string refusal(const JobSettings& settings, const JobShape& shape, const HostFacts& host, const SettingNames& names) {
  try {
    resolve_job_settings(settings, shape, host, names);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(JobSettings, TheDefaultsFollowTheHostAndTheJob) {
  const HostFacts host{16, 100 * gib, 2, true};
  const JobSettings resolved = resolve_job_settings({}, shape_of(64), host, scenario_names);
  EXPECT_EQ(resolved.synthesis_threads, 8u);          // half the cores
  EXPECT_EQ(resolved.partitions_in_flight, 8u + 4u);  // threads + 2 GPUs x 2 workers
  EXPECT_EQ(resolved.staging, Staging::pinned);
  EXPECT_EQ(resolved.pool_slabs, 12u);  // the partitions in flight, one pool
  EXPECT_EQ(resolved.host_budget_bytes, 2 * gib + 80 * gib);
  EXPECT_EQ(resolved.retry_limit, 2u);

  const JobSettings few = resolve_job_settings({}, shape_of(3), host, scenario_names);
  EXPECT_EQ(few.synthesis_threads, 3u);  // never more threads or admissions than partitions
  EXPECT_EQ(few.partitions_in_flight, 3u);
  EXPECT_EQ(resolve_job_settings({}, shape_of(3), {16, 100 * gib, 1, false}, scenario_names).staging, Staging::pageable);
}

TEST(JobSettings, PoolsShareTheSlabsTheBudgetHolds) {
  JobSettings settings;
  settings.pool_layout = PoolLayout::per_gpu;
  settings.partitions_in_flight = 7;
  const JobShape shape = shape_of(64);
  const HostFacts host{16, 0, 3, true};
  // The key, 6 workers and exactly 8 partitions.
  settings.host_budget_bytes = shape.key_bytes + 6 * shape.worker_host_bytes_pinned + 8 * shape.partition_host_bytes();
  EXPECT_EQ(resolve_job_settings(settings, shape, host, scenario_names).pool_slabs, 2u);  // 7 over 3, as 8 allow
  settings.pool_slabs = 3;
  const std::string engine = refusal(settings, shape, host, command_line_names);
  EXPECT_EQ(engine.rfind("--pool-slabs 3 per GPU x 3 GPUs: the budget of ", 0), 0u) << engine;
  EXPECT_NE(engine.find("holds 8 partitions next to the key and workers' buffers; raise the budget (--budget) or "
                        "lower --pool-slabs (or use --pool-layout per-host)"),
            std::string::npos)
      << engine;
  EXPECT_NE(refusal(settings, shape, host, scenario_names).find("[policy] pool_slabs 3 per GPU"), std::string::npos);
}

TEST(JobSettings, RefusalsNameTheSettingAsTheCallerSpellsIt) {
  const JobShape shape = shape_of(4);
  JobSettings tight;
  tight.host_budget_bytes = shape.key_bytes;  // no room for a worker, let alone a partition
  const std::string engine = refusal(tight, shape, {16, 0, 1, true}, command_line_names);
  EXPECT_NE(engine.find("raise the budget (--budget), or use fewer workers (--workers)"), std::string::npos) << engine;
  const std::string model = refusal(tight, shape, {16, 0, 1, true}, scenario_names);
  EXPECT_NE(model.find("[policy] host_budget_gib"), std::string::npos) << model;
  EXPECT_NE(refusal({}, shape, {16, 0, 1, true}, command_line_names).find("give the host budget (--budget)"),
            std::string::npos);
  JobSettings no_workers;
  no_workers.workers_per_gpu = 0;
  EXPECT_EQ(refusal(no_workers, shape, {16, gib, 1, true}, scenario_names), "[policy] workers_per_gpu must be at least 1");
}

TEST(JobSettings, ThePolicyAdmitsPartitionsAgainstTheBudgetLessTheKeyAndWorkers) {
  const JobShape shape = shape_of(16);
  JobSettings settings;
  settings.staging = Staging::pageable;
  settings.host_budget_bytes = 40 * gib;
  const JobSettings resolved = resolve_job_settings(settings, shape, {16, 0, 2, true}, scenario_names);
  const PolicySettings policy = policy_settings(resolved, shape, 2);
  EXPECT_EQ(policy.host_budget_bytes, 40 * gib - 2 * gib - 4 * 200 * mib);  // pageable workers' bytes
  EXPECT_EQ(policy.partition_host_bytes, 128 * mib);                        // a/b/c and witness
  EXPECT_EQ(policy.pool_slabs, 0u);
  EXPECT_EQ(policy.gpus, 2u);
  EXPECT_EQ(policy.workers_per_gpu, 2u);
  EXPECT_NO_THROW(validate(policy));
}

TEST(JobSettings, TheDevicePlanLowersWorkersOrStreamsTheKey) {
  const DeviceFootprint footprint{10 * gib, 2 * gib, 3 * gib, 1 * gib, {}};
  JobSettings settings;
  settings.workers_per_gpu = 3;
  settings.device_budget_bytes = 18 * gib;  // the key, the workspaces and two workers
  EXPECT_FALSE(fit_device_memory(settings, footprint, 8).change.empty());
  EXPECT_EQ(settings.workers_per_gpu, 2u);
  EXPECT_EQ(settings.srs_residency, SrsResidency::device);
  settings.device_budget_bytes = 7 * gib;  // one streaming worker beside the workspaces, no key
  fit_device_memory(settings, footprint, 8);
  EXPECT_EQ(settings.srs_residency, SrsResidency::pinned_host);
  EXPECT_EQ(settings.workers_per_gpu, 1u);
  settings.device_budget_bytes = 0;  // unlimited
  settings.workers_per_gpu = 4;
  settings.srs_residency = SrsResidency::device;
  EXPECT_TRUE(fit_device_memory(settings, footprint, 8).change.empty());
  EXPECT_EQ(settings.workers_per_gpu, 4u);
}

TEST(JobSettings, TheSidecarsJsonReadsBackAndOldSidecarsReadAsDefaults) {
  JobSettings settings;
  settings.synthesis_threads = 6;
  settings.partitions_in_flight = 9;
  settings.staging = Staging::pageable;
  settings.pool_layout = PoolLayout::per_gpu;
  settings.host_budget_bytes = 123456789012;
  settings.device_budget_bytes = 98765432109;
  settings.workers_per_gpu = 3;
  settings.srs_residency = SrsResidency::pinned_host;
  settings.fixed_bases = FixedBaseTables::on;
  settings.retry_limit = 5;
  const nlohmann::json json = settings;
  const auto read = json.get<JobSettings>();
  EXPECT_EQ(nlohmann::json(read), json);

  const auto old = nlohmann::json::parse(R"({"staging": "pinned", "synthesis_threads": 4, "pool_slabs": 2,
      "partitions_in_flight": 6, "host_budget_bytes": 68719476736, "workers_per_gpu": 2})")
                       .get<JobSettings>();
  EXPECT_EQ(old.pool_layout, PoolLayout::per_host);
  EXPECT_EQ(old.srs_residency, SrsResidency::device);
  EXPECT_EQ(old.retry_limit, 2u);
  EXPECT_EQ(old.device_budget_bytes, 0u);
  EXPECT_THROW(nlohmann::json::parse(R"({"staging": "paged"})").get<JobSettings>(), std::invalid_argument);
  for (const char* count : {R"({"pool_slabs": 1e30})", R"({"pool_slabs": -1})", R"({"retry_limit": 4294967296})",
                            R"({"host_budget_bytes": 1.5})"})
    EXPECT_THROW(nlohmann::json::parse(count).get<JobSettings>(), std::invalid_argument) << count;

  EXPECT_EQ(old.fixed_bases, FixedBaseTables::off);

  const DeviceFootprint footprint{1, 2, 3, 4, {{{KeyArray::b2, 2}, 5, 6, 0.5, 0.25}}};
  const auto footprint_read = nlohmann::json(footprint).get<DeviceFootprint>();
  EXPECT_EQ(footprint_read.key_bytes + 10 * footprint_read.shared_bytes + 100 * footprint_read.worker_bytes +
                1000 * footprint_read.streaming_bytes,
            4321u);
  ASSERT_EQ(footprint_read.fixed_bases.size(), 1u);
  EXPECT_EQ(nlohmann::json(footprint_read), nlohmann::json(footprint));
  const auto one_set = nlohmann::json::parse(R"({"array": "l", "table_bytes": 7})").get<FixedBaseOption>();
  EXPECT_EQ(one_set.table, (FixedBaseTable{KeyArray::l, 1}));
  EXPECT_THROW(nlohmann::json::parse(R"({"array": "l", "sets": 0})").get<FixedBaseOption>(), std::invalid_argument);
}

// Resolving is a fixed point: what the engine writes in its sidecar and the model reads back
// resolves to the same settings, so a run predicted from its sidecar runs the settings measured.
RC_GTEST_PROP(JobSettingsProperties, ResolvedSettingsResolveToThemselves, ()) {
  JobSettings requested;
  requested.synthesis_threads = *rc::gen::inRange<std::uint32_t>(0, 40);
  requested.partitions_in_flight = *rc::gen::inRange<std::uint32_t>(0, 40);
  if (*rc::gen::arbitrary<bool>()) requested.staging = *rc::gen::element(Staging::pinned, Staging::pageable);
  requested.pool_layout = *rc::gen::element(PoolLayout::per_host, PoolLayout::per_gpu);
  requested.workers_per_gpu = *rc::gen::inRange<std::uint32_t>(1, 4);
  const JobShape shape = shape_of(*rc::gen::inRange<std::uint32_t>(1, 64));
  const HostFacts host{*rc::gen::inRange<std::uint32_t>(1, 128), *rc::gen::inRange<std::uint64_t>(1, 512) * gib,
                       *rc::gen::inRange<std::uint32_t>(1, 8), *rc::gen::arbitrary<bool>()};
  JobSettings resolved;
  try {
    resolved = resolve_job_settings(requested, shape, host, scenario_names);
  } catch (const std::invalid_argument&) {
    RC_DISCARD("settings that cannot make progress");
  }
  RC_ASSERT(resolved.synthesis_threads >= 1 && resolved.synthesis_threads <= shape.partitions);
  RC_ASSERT(resolved.partitions_in_flight >= 1 && resolved.partitions_in_flight <= shape.partitions);
  RC_ASSERT(resolved.staging.has_value());
  RC_ASSERT((*resolved.staging == Staging::pinned) == (resolved.pool_slabs > 0));
  RC_ASSERT(nlohmann::json(resolve_job_settings(resolved, shape, host, scenario_names)) == nlohmann::json(resolved));
  RC_ASSERT(nlohmann::json(nlohmann::json(resolved).get<JobSettings>()) == nlohmann::json(resolved));
  validate(policy_settings(resolved, shape, host.gpus));
}

}  // namespace
}  // namespace zkpipe::policy
