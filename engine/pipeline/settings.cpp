#include "engine/pipeline/settings.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "engine/pipeline/host_memory.hpp"
#include "engine/util/error.hpp"
#include "engine/util/json_fields.hpp"
#include "engine/util/machine.hpp"

namespace zk::pipeline {

bool uses_cuda(std::string_view backend) { return backend == "cuda" || backend == "faulty-cuda"; }
bool injects_faults(std::string_view backend) { return backend == "fake" || backend == "faulty-cuda"; }

MachineFacts machine_facts() {
  return {.cores = std::max(1u, std::thread::hardware_concurrency()),
          .available_memory_bytes = available_memory_bytes(),
          .cuda_devices = uint32_t(std::max(0, cuda_devices()))};
}

uint64_t worker_host_bytes(const JobSizes& sizes, std::string_view backend, Staging staging) {
  const uint64_t split_bytes = sizes.witness_splits * (sizes.witness_bytes + sizes.witness_bytes / 8);  // scalars + indices
  // The CUDA backend's pinned staging buffer holds the splits again; other backends hold a/b/c.
  const uint64_t staged_bytes = !uses_cuda(backend) ? sizes.abc_bytes : staging == Staging::pinned ? split_bytes : 0;
  return sizes.witness_bytes + split_bytes + staged_bytes;
}

zkpipe::policy::JobShape job_shape(const JobSizes& sizes, std::string_view backend) {
  return {sizes, worker_host_bytes(sizes, backend, Staging::pinned), worker_host_bytes(sizes, backend, Staging::pageable)};
}

namespace {

void validate_faults(const Settings& s) {
  const zkpipe::faults::FaultOptions& f = s.fake.faults;
  try {
    zkpipe::faults::validate(f);
  } catch (const std::invalid_argument& e) {
    fail("--backend {}: {} (see --fault-rate, --copy-fault-rate and the other fault options)", s.backend, e.what());
  }
  if (s.backend == "fake") {
    if (!(s.fake.copy_delay_s >= 0 && s.fake.kernel_delay_s >= 0)) fail("--backend fake: delays must be >= 0");
    if (f.device_allocation_failure_probability > 0 || f.device_reset_probability > 0)
      fail("--backend fake allocates no device memory and has no context to reset: --alloc-fault-rate and "
           "--device-reset-rate are faulty-cuda's (use --device-lost-rate)");
    return;
  }
  if (f.slow_transfer_probability > 0 || f.wrong_result_probability > 0)
    fail("--backend faulty-cuda injects no slow copies or wrong results (the fake device's): drop --wrong-result-rate");
  if (f.stalled_transfer_probability > 0 && !(f.stalled_transfer_s > 0))
    fail("--backend faulty-cuda: a stalled copy needs a watchdog: give --stall-s SECONDS (> 0) with --copy-fault-rate");
}

}  // namespace

Settings resolve_settings(Settings s, const JobSizes& sizes, const MachineFacts& machine) {
  const uint32_t cuda_devices = machine.cuda_devices.value_or(0);
  if (s.backend.empty()) s.backend = cuda_devices > 0 ? "cuda" : "cpu";
  if (uses_cuda(s.backend) && s.gpus > cuda_devices)
    fail("--gpus {} but {} CUDA devices are present", s.gpus, cuda_devices);
  if (s.gpus == 0) s.gpus = uses_cuda(s.backend) ? std::max(cuda_devices, 1u) : 1;
  if (injects_faults(s.backend)) validate_faults(s);
  const zkpipe::policy::HostFacts host{machine.cores.value_or(1), machine.available_memory_bytes.value_or(0), s.gpus,
                                       cuda_devices > 0};
  try {
    static_cast<zkpipe::policy::JobSettings&>(s) =
        zkpipe::policy::resolve_job_settings(s, job_shape(sizes, s.backend), host, zkpipe::policy::command_line_names);
  } catch (const std::invalid_argument& e) {
    fail("{}", e.what());
  }
  return s;
}

zkpipe::policy::DevicePlan fit_device_memory(Settings& s, const Settings& requested, const JobSizes& sizes,
                                            const MachineFacts& machine, const zkpipe::policy::DeviceFootprint& footprint,
                                            uint64_t device_free_bytes) {
  if (s.device_budget_bytes == 0) s.device_budget_bytes = device_free_bytes / 10 * 9;
  Settings fitted = requested;
  fitted.device_budget_bytes = s.device_budget_bytes;
  fitted.workers_per_gpu = s.workers_per_gpu;
  fitted.srs_residency = s.srs_residency;
  zkpipe::policy::DevicePlan plan;
  try {
    plan = zkpipe::policy::fit_device_memory(fitted, footprint, zkpipe::policy::partitions_per_gpu(sizes.partitions, s.gpus));
  } catch (const std::invalid_argument& e) {
    fail("{} (--device-budget)", e.what());
  }
  if (!plan.change.empty()) s = resolve_settings(fitted, sizes, machine);
  return plan;
}

std::string describe(const Settings& s) {
  // Only the CUDA backend's workers compute on GPUs and hold the key on a device.
  const bool gpu = uses_cuda(s.backend);
  const std::string workers = gpu                  ? fmt::format("{} GPU(s) x {} worker(s)", s.gpus, s.workers_per_gpu)
                              : s.backend == "cpu" ? fmt::format("{} worker(s) on the CPU", s.workers_per_gpu)
                                                   : fmt::format("{} worker(s) on the fake device", s.workers_per_gpu);
  std::string text = fmt::format(
      "backend {}, {}, {} synthesis thread(s), {} partition(s) in flight\n"
      "staging {}{}, host budget {}{}{}, {} retries per partition",
      s.backend, workers, s.synthesis_threads, s.partitions_in_flight,
      zkpipe::policy::staging_name(s.staging.value_or(Staging::pageable)),
      s.pool_slabs ? fmt::format(" ({} pinned slabs{})", s.pool_slabs,
                                 s.pool_layout == PoolLayout::per_gpu ? " per GPU" : "")
                   : std::string(),
      format_bytes(s.host_budget_bytes),
      s.device_budget_bytes ? fmt::format(", device budget {} per GPU", format_bytes(s.device_budget_bytes)) : std::string(),
      gpu ? fmt::format(", SRS on {}, fixed-base tables {}", srs_residency_name(s.srs_residency),
                        zk::name_of(zkpipe::policy::fixed_base_tables_names, s.fixed_bases))
          : std::string(),
      s.retry_limit);
  if (s.stage_alone != StageAlone::none)
    text += fmt::format("\nmeasuring the {} stage alone", stage_alone_name(s.stage_alone));
  const zkpipe::faults::FaultOptions& f = s.fake.faults;
  if (s.backend == "fake") {
    text += fmt::format(
        "\nfake device: fault seed {}, P(copy error) {} (stalls {} s), P(slow copy) {} (x{}), P(kernel error) {}, "
        "P(wrong result) {}, P(device lost) {}, P(pinning refused) {}, delays {} s per copy, {} s per kernel",
        f.seed, f.stalled_transfer_probability, f.stalled_transfer_s, f.slow_transfer_probability,
        f.slow_transfer_factor, f.gpu_error_probability, f.wrong_result_probability, f.worker_death_probability,
        f.pinned_allocation_failure_probability, s.fake.copy_delay_s, s.fake.kernel_delay_s);
  } else if (s.backend == "faulty-cuda") {
    text += fmt::format(
        "\nfaulty-cuda: fault seed {}, P(kernel error) {}, P(device allocation fails) {}, P(copy stalls) {} "
        "(watchdog {} s), P(sticky error) {}, P(device reset) {}, P(pinning refused) {}",
        f.seed, f.gpu_error_probability, f.device_allocation_failure_probability, f.stalled_transfer_probability,
        f.stalled_transfer_s, f.worker_death_probability, f.device_reset_probability,
        f.pinned_allocation_failure_probability);
  }
  return text;
}

zkpipe::trace::RunSettings run_settings(const Settings& s) {
  // The engine splits the cores between the syntheses running (kernels/util/parallel.hpp).
  zkpipe::trace::RunSettings run{.job = s,
                                 .synthesis_core_share = zkpipe::policy::SynthesisCoreShare::pooled,
                                 .gpus = s.gpus,
                                 .backend = s.backend,
                                 .stage_alone = s.stage_alone};
  if (injects_faults(s.backend)) {
    nlohmann::json faults = {{"copy_delay_s", s.fake.copy_delay_s},
                             {"kernel_delay_s", s.fake.kernel_delay_s},
                             {"device_memory_bytes", s.fake.device_memory_bytes}};
    zkpipe::faults::for_each_option(s.fake.faults, zk::JsonFieldWriter{faults});
    run.injected_faults = std::move(faults);
  }
  return run;
}

}  // namespace zk::pipeline
