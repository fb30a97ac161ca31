#include "policy_harness.hpp"

namespace zkpipe::properties {

void showValue(const HarnessSettings& settings, std::ostream& os) {
  const policy::PolicySettings& p = settings.policy;
  os << "partitions " << p.partitions << ", partition_host_bytes " << p.partition_host_bytes << ", host_budget_bytes "
     << p.host_budget_bytes << ", in_flight " << p.partitions_in_flight_max << ", staging "
     << policy::staging_name(p.staging) << ", pool_slabs " << p.pool_slabs << ", pool_layout "
     << policy::pool_layout_name(p.pool_layout) << ", gpus " << p.gpus
     << ", workers_per_gpu " << p.workers_per_gpu << ", retry_limit " << p.retry_limit << ", synthesis_threads "
     << settings.synthesis_threads;
}

std::string_view property_name(PolicyProperty property) {
  switch (property) {
    case PolicyProperty::leases_within_pool: return "leases_within_pool";
    case PolicyProperty::reserved_within_budget: return "reserved_within_budget";
    case PolicyProperty::ends_exactly_once: return "ends_exactly_once";
    case PolicyProperty::phases_in_order: return "phases_in_order";
    case PolicyProperty::no_deadlock: return "no_deadlock";
    case PolicyProperty::gpu_compute_exclusive: return "gpu_compute_exclusive";
    case PolicyProperty::runs_on_bound_gpu: return "runs_on_bound_gpu";
  }
  return "unknown";
}

std::string_view event_name(EventKind kind) {
  switch (kind) {
    case EventKind::start_synthesis: return "start_synthesis";
    case EventKind::finish_synthesis: return "finish_synthesis";
    case EventKind::assign_gpu_work: return "assign_gpu_work";
    case EventKind::finish_copy: return "finish_copy";
    case EventKind::begin_compute: return "begin_compute";
    case EventKind::finish_compute: return "finish_compute";
    case EventKind::watchdog_fires: return "watchdog_fires";
    case EventKind::gpu_error: return "FAULT gpu_error";
    case EventKind::pinned_allocation_failure: return "FAULT pinned_allocation_failure";
    case EventKind::slow_transfer: return "FAULT slow_transfer";
    case EventKind::stalled_transfer: return "FAULT stalled_transfer";
    case EventKind::worker_dies: return "FAULT worker_dies";
  }
  return "unknown";
}

}  // namespace zkpipe::properties
