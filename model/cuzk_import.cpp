#include "cuzk_import.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <variant>
#include <deque>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trace/perfetto.hpp"
#include "trace/summary.hpp"
#include "trace/trace_csv.hpp"

namespace zkpipe::model::cuzk {

namespace {

using Values = std::map<std::string, std::int64_t>;
constexpr std::int64_t no_partition = -1;  // a monolithic job's one GPU call
constexpr std::uint64_t abc_bytes_per_constraint = 3 * 32;  // a, b and c: one 32-byte Fr each

std::optional<std::int64_t> number_in(const std::map<std::string, std::string>& fields, const std::string& key) {
  const auto found = fields.find(key);
  if (found == fields.end()) return std::nullopt;
  std::string_view text = found->second;
  if (text == "None") return no_partition;  // tracing's Debug of Option<usize>
  if (text.starts_with("Some(") && text.ends_with(")")) text = text.substr(5, text.size() - 6);
  const auto value = parse_integer(text);
  return value && *value >= 0 ? value : std::nullopt;
}

std::optional<std::int64_t> value_of(const Values& values, const std::string& key) {
  const auto found = values.find(key);
  return found == values.end() ? std::nullopt : std::optional(found->second);
}

struct Partition {
  std::string job_id;
  std::int64_t cuzk_partition = no_partition;
  std::optional<double> synth_start_ms, synth_end_ms, queued_ms, pickup_ms, end_ms, gpu_ms;
  std::optional<std::uint32_t> worker;
  std::optional<std::size_t> call;  // its (last) GPU call
};

// One gpu_prove_start of one partition on one worker, with what its CUZK lines said.
struct GpuCall {
  std::size_t partition = 0;
  std::uint32_t worker = 0;
  double start_ms = 0;  // GPU_START
  std::optional<std::int64_t> spawn_to_enter_ms, setup_to_split_ms, pre_lock_ms, mutex_wait_ms, prep_msm_ms, b_g2_ms,
      ntt_msm_h_ms, barrier_ms, batch_add_ms, tail_msm_ms, mutex_held_ms;
  std::vector<Values> ntt_h;  // per circuit
  bool section_overlapped = false;

  bool kernels_known() const {
    return pre_lock_ms && mutex_wait_ms && !ntt_h.empty() && ntt_msm_h_ms && barrier_ms && batch_add_ms && tail_msm_ms &&
           mutex_held_ms && !section_overlapped;
  }
  double entry_ms() const { return start_ms + double(spawn_to_enter_ms.value_or(0)); }
};

struct WorkerPlace {
  std::uint32_t gpu = 0, index = 0;
};

// Collects the records of one daemon run, then lays out its spans.
class Assembler {
 public:
  Disposition take(const Record& record) {
    return std::visit([this](const auto& r) { return on(r); }, record);
  }
  ImportResult finish(const ImportOptions& options, const LineCounts& lines);

 private:
  Disposition on(const TimelineRecord& record);
  Disposition on(const KernelTimingRecord& record);
  Disposition on(const TracingRecord& record);
  Disposition on_gpu_start(const TimelineRecord& record, Partition& partition, std::uint32_t worker);
  Disposition in_section(const std::function<void(GpuCall&)>& set, bool closes = false);
  Partition& partition_of(const std::string& job_id, std::int64_t cuzk_partition);
  // The call at the queue's front, taken: unattributed when the queue is empty.
  Disposition from_queue(std::deque<std::size_t>& queue, const std::function<void(std::size_t)>& take);
  void open_section(std::size_t call, std::int64_t pre_lock_ms, std::int64_t mutex_wait_ms);

  WorkerPlace place_of(std::uint32_t worker) const;
  std::vector<std::uint32_t> synthesis_lanes() const;
  void lay_out_call(const GpuCall& call, double& gpu_free_ms, const ImportOptions& options, ImportResult& result) const;
  trace::Sidecar sidecar(const ImportOptions& options, const ImportStats& stats) const;
  void add_utilization(ImportResult& result) const;

  std::vector<Partition> partitions_;
  std::map<std::pair<std::string, std::int64_t>, std::size_t> partition_index_;
  std::vector<GpuCall> calls_;
  std::deque<std::size_t> awaiting_split_, awaiting_lock_, awaiting_prep_, awaiting_b_g2_;
  std::vector<std::size_t> open_sections_, section_order_;
  std::map<std::pair<std::uint32_t, std::int64_t>, std::vector<std::size_t>> calls_of_worker_partition_;
  std::map<std::pair<std::uint32_t, std::int64_t>, std::size_t> spawn_lines_seen_;
  std::map<std::uint32_t, WorkerPlace> announced_;
  std::set<std::uint64_t> logged_constraints_;
  bool pinned_synthesis_seen_ = false;
};

Partition& Assembler::partition_of(const std::string& job_id, std::int64_t cuzk_partition) {
  const auto [found, added] = partition_index_.try_emplace({job_id, cuzk_partition}, partitions_.size());
  if (added) {
    Partition& partition = partitions_.emplace_back();
    partition.job_id = job_id;
    partition.cuzk_partition = cuzk_partition;
  }
  return partitions_[found->second];
}

Disposition Assembler::from_queue(std::deque<std::size_t>& queue, const std::function<void(std::size_t)>& take) {
  if (queue.empty()) return Disposition::unattributed;  // a line of a call whose GPU_START the logs lack
  const std::size_t call = queue.front();
  queue.pop_front();
  take(call);
  return Disposition::used;
}

void Assembler::open_section(std::size_t call, std::int64_t pre_lock_ms, std::int64_t mutex_wait_ms) {
  calls_[call].pre_lock_ms = pre_lock_ms;
  calls_[call].mutex_wait_ms = mutex_wait_ms;
  open_sections_.push_back(call);
  section_order_.push_back(call);
  if (open_sections_.size() > 1)
    for (std::size_t open : open_sections_) calls_[open].section_overlapped = true;
}

Disposition Assembler::on(const TimelineRecord& record) {
  const std::int64_t cuzk_partition = number_in(record.detail, "partition").value_or(no_partition);
  const std::optional<std::int64_t> worker = number_in(record.detail, "worker");
  static const std::set<std::string> with_worker = {"GPU_PICKUP", "GPU_START", "GPU_END"};
  static const std::set<std::string> known = {"SYNTH_START", "SYNTH_END", "GPU_QUEUE", "GPU_PICKUP", "GPU_START", "GPU_END"};
  if (!known.contains(record.event)) return Disposition::informational;
  if (with_worker.contains(record.event) && (!worker || *worker == no_partition)) return Disposition::malformed;
  Partition& partition = partition_of(record.job_id, cuzk_partition);
  if (record.event == "SYNTH_START") partition.synth_start_ms = record.offset_ms;
  if (record.event == "SYNTH_END") partition.synth_end_ms = record.offset_ms;
  if (record.event == "GPU_QUEUE") partition.queued_ms = record.offset_ms;
  if (record.event == "GPU_PICKUP") {
    partition.pickup_ms = record.offset_ms;
    partition.worker = std::uint32_t(*worker);
  }
  if (record.event == "GPU_START") return on_gpu_start(record, partition, std::uint32_t(*worker));
  if (record.event == "GPU_END") {
    const std::optional<std::int64_t> gpu_ms = number_in(record.detail, "gpu_ms");
    if (!gpu_ms) return Disposition::malformed;
    partition.end_ms = record.offset_ms;
    partition.gpu_ms = double(*gpu_ms);
  }
  return Disposition::used;
}

Disposition Assembler::on_gpu_start(const TimelineRecord& record, Partition& partition, std::uint32_t worker) {
  const std::size_t index = calls_.size();
  const std::size_t partition_number = std::size_t(&partition - partitions_.data());
  GpuCall& call = calls_.emplace_back();
  call.partition = partition_number;
  call.worker = worker;
  call.start_ms = record.offset_ms;
  partition.call = index;
  partition.worker = worker;
  awaiting_split_.push_back(index);
  calls_of_worker_partition_[{worker, partition.cuzk_partition}].push_back(index);
  return Disposition::used;
}

Disposition Assembler::in_section(const std::function<void(GpuCall&)>& set, bool closes) {
  if (open_sections_.empty()) return Disposition::unattributed;
  const bool one_open = open_sections_.size() == 1;
  if (one_open) set(calls_[open_sections_.front()]);
  if (closes) open_sections_.erase(open_sections_.begin());  // of several, which closed cannot be told: all overlapped
  return one_open ? Disposition::used : Disposition::unattributed;
}

Disposition Assembler::on(const KernelTimingRecord& record) {
  const Values& v = record.values;
  if (!record.text.empty()) return Disposition::informational;  // pool threshold, d_a cache allocation
  if (record.ntt_h) {
    if (!value_of(v, "ntt_kernels") || !value_of(v, "coset_intt_sync") || !value_of(v, "msm_invoke"))
      return Disposition::malformed;
    return in_section([&](GpuCall& call) { call.ntt_h.push_back(v); });
  }
  auto both = [&](const char* a, const char* b) { return value_of(v, a) && value_of(v, b); };
  if (v.contains("split_vectors_ms")) {
    if (!both("split_vectors_ms", "setup_to_split_ms")) return Disposition::malformed;
    return from_queue(awaiting_split_, [&](std::size_t call) {
      calls_[call].setup_to_split_ms = v.at("setup_to_split_ms");
      awaiting_lock_.push_back(call);
      awaiting_prep_.push_back(call);
    });
  }
  if (v.contains("prep_msm_ms"))
    return from_queue(awaiting_prep_, [&](std::size_t call) {
      calls_[call].prep_msm_ms = v.at("prep_msm_ms");
      awaiting_b_g2_.push_back(call);
    });
  if (v.contains("b_g2_msm_ms"))
    return from_queue(awaiting_b_g2_, [&](std::size_t call) { calls_[call].b_g2_ms = v.at("b_g2_msm_ms"); });
  if (v.contains("pre_lock_cpu_ms") || v.contains("mutex_wait_ms")) {
    if (!both("pre_lock_cpu_ms", "mutex_wait_ms")) return Disposition::malformed;
    return from_queue(awaiting_lock_, [&](std::size_t call) { open_section(call, v.at("pre_lock_cpu_ms"), v.at("mutex_wait_ms")); });
  }
  if (v.contains("ntt_msm_h_ms")) return in_section([&](GpuCall& call) { call.ntt_msm_h_ms = v.at("ntt_msm_h_ms"); });
  if (v.contains("barrier_wait_ms")) return in_section([&](GpuCall& call) { call.barrier_ms = v.at("barrier_wait_ms"); });
  if (v.contains("batch_add_ms")) return in_section([&](GpuCall& call) { call.batch_add_ms = v.at("batch_add_ms"); });
  if (v.contains("tail_msm_ms")) return in_section([&](GpuCall& call) { call.tail_msm_ms = v.at("tail_msm_ms"); });
  if (v.contains("mutex_held_ms"))
    return in_section([&](GpuCall& call) { call.mutex_held_ms = v.at("mutex_held_ms"); }, /*closes=*/true);
  return Disposition::informational;  // async_dealloc_ms, or a line of another cuzk version
}

Disposition Assembler::on(const TracingRecord& record) {
  const auto& f = record.fields;
  if (record.message == "pipeline GPU worker started") {
    const auto worker = number_in(f, "worker_id"), gpu = number_in(f, "gpu"), index = number_in(f, "sub_id");
    if (!worker || !gpu || !index) return Disposition::malformed;
    announced_[std::uint32_t(*worker)] = {std::uint32_t(*gpu), std::uint32_t(*index)};
    return Disposition::used;
  }
  if (record.message == "GPU_TIMING spawn_blocking prove_start") {
    const auto worker = number_in(f, "worker_id"), partition = number_in(f, "partition");
    const auto spawn_ms = number_in(f, "spawn_to_enter_ms");
    if (!worker || !partition || !spawn_ms) return Disposition::malformed;
    const std::pair key{std::uint32_t(*worker), *partition};
    const auto calls = calls_of_worker_partition_.find(key);
    std::size_t& seen = spawn_lines_seen_[key];
    if (calls == calls_of_worker_partition_.end() || seen >= calls->second.size()) return Disposition::unattributed;
    calls_[calls->second[seen++]].spawn_to_enter_ms = *spawn_ms;
    return Disposition::used;
  }
  if (record.message == "cached synthesis capacity hint" || record.message == "attempting pinned memory synthesis") {
    const auto constraints = number_in(f, "num_constraints");
    if (!constraints) return Disposition::malformed;
    logged_constraints_.insert(std::uint64_t(*constraints));
    pinned_synthesis_seen_ |= record.message == "attempting pinned memory synthesis";
    return Disposition::used;
  }
  return Disposition::informational;  // other GPU_TIMING and FIN_TIMING lines
}

WorkerPlace Assembler::place_of(std::uint32_t worker) const {
  const auto found = announced_.find(worker);
  return found == announced_.end() ? WorkerPlace{0, worker} : found->second;
}

// Per partition, the lane of its synthesis: the first lane free at its start, in start order.
std::vector<std::uint32_t> Assembler::synthesis_lanes() const {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < partitions_.size(); ++i)
    if (partitions_[i].synth_start_ms && partitions_[i].synth_end_ms) order.push_back(i);
  std::ranges::stable_sort(order, {}, [&](std::size_t i) { return *partitions_[i].synth_start_ms; });
  std::vector<std::uint32_t> lane_of(partitions_.size(), 0);
  std::vector<double> lane_free_ms;
  for (std::size_t i : order) {
    const auto free = std::ranges::find_if(lane_free_ms, [&](double ms) { return ms <= *partitions_[i].synth_start_ms; });
    lane_of[i] = std::uint32_t(free - lane_free_ms.begin());
    if (free == lane_free_ms.end()) lane_free_ms.push_back(0);
    lane_free_ms[lane_of[i]] = *partitions_[i].synth_end_ms;
  }
  return lane_of;
}

void Assembler::lay_out_call(const GpuCall& call, double& gpu_free_ms, const ImportOptions& options,
                             ImportResult& result) const {
  const Partition& partition = partitions_[call.partition];
  const WorkerPlace place = place_of(call.worker);
  const std::string gpu = fmt::format("gpu{}:w{}", place.gpu, place.index), host = fmt::format("cpu:gpu{}w{}", place.gpu, place.index);
  auto add = [&](trace::Phase phase, const std::string& resource, double start_ms, double end_ms) {
    result.spans.push_back({options.run, trace::Source::measured, std::uint32_t(call.partition), phase, resource,
                            start_ms / 1e3, std::max(start_ms, end_ms) / 1e3, 0, 0, 0u, call.worker});
  };
  const double asked_ms = call.entry_ms() + double(*call.pre_lock_ms);
  add(trace::Phase::witness_split, host, partition.pickup_ms.value_or(call.start_ms), asked_ms);
  const double held_ms = asked_ms + double(*call.mutex_wait_ms);
  const double section_ms = std::max(held_ms, gpu_free_ms);
  result.stats.sections_shifted_ms_max = std::max(result.stats.sections_shifted_ms_max, section_ms - held_ms);
  double at_ms = section_ms;
  for (const Values& circuit : call.ntt_h) {
    at_ms += double(value_of(circuit, "d_b_alloc").value_or(0));
    const double ntt_ms = double(circuit.at("ntt_kernels") + circuit.at("coset_intt_sync"));
    add(trace::Phase::ntt, gpu, at_ms, at_ms + ntt_ms);
    at_ms += ntt_ms + double(value_of(circuit, "msm_init").value_or(0));
    add(trace::Phase::msm_h, gpu, at_ms, at_ms + double(circuit.at("msm_invoke")));
    at_ms += double(circuit.at("msm_invoke") + value_of(circuit, "msm_dtor").value_or(0));
  }
  at_ms = std::max(at_ms, section_ms + double(*call.ntt_msm_h_ms)) + double(*call.barrier_ms);
  add(trace::Phase::batch_add, gpu, at_ms, at_ms + double(*call.batch_add_ms));
  at_ms += double(*call.batch_add_ms);
  add(trace::Phase::tail_msm, gpu, at_ms, at_ms + double(*call.tail_msm_ms));
  gpu_free_ms = std::max(at_ms + double(*call.tail_msm_ms), section_ms + double(*call.mutex_held_ms));
  double b_g2_end_ms = gpu_free_ms;
  if (call.setup_to_split_ms && call.prep_msm_ms && call.b_g2_ms) {
    const double b_g2_ms = call.entry_ms() + double(*call.setup_to_split_ms + *call.prep_msm_ms);
    add(trace::Phase::msm_b2, host, b_g2_ms, b_g2_ms + double(*call.b_g2_ms));
    b_g2_end_ms = std::max(b_g2_end_ms, b_g2_ms + double(*call.b_g2_ms));
  }
  if (partition.end_ms) add(trace::Phase::assemble, host, std::min(b_g2_end_ms, *partition.end_ms), *partition.end_ms);
  result.stats.mutex_wait_s += double(*call.mutex_wait_ms) / 1e3;
  result.stats.cuzk_gpu_s += partition.gpu_ms.value_or(0) / 1e3;
}

std::string constraints_note(const std::set<std::uint64_t>& logged) {
  if (logged.empty()) return "the logs state no num_constraints (no capacity hint line): give --constraints";
  return fmt::format("the logs state several circuits' num_constraints ({}): give --constraints", fmt::join(logged, ", "));
}

ImportResult Assembler::finish(const ImportOptions& options, const LineCounts& lines) {
  ImportResult result;
  result.lines = lines;
  ImportStats& stats = result.stats;
  stats.constraints = options.constraints;
  if (!stats.constraints && logged_constraints_.size() == 1) stats.constraints = *logged_constraints_.begin();
  if (!stats.constraints) stats.constraints_note = constraints_note(logged_constraints_);
  const std::uint64_t constraints = stats.constraints.value_or(0);
  const std::vector<std::uint32_t> lanes = synthesis_lanes();
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    const Partition& partition = partitions_[i];
    if (partition.queued_ms && partition.pickup_ms) stats.gpu_queue_s += (*partition.pickup_ms - *partition.queued_ms) / 1e3;
    if (!partition.synth_start_ms || !partition.synth_end_ms) continue;
    result.spans.push_back({options.run, trace::Source::measured, std::uint32_t(i), trace::Phase::synth,
                            fmt::format("cpu:{}", lanes[i]), *partition.synth_start_ms / 1e3,
                            std::max(*partition.synth_start_ms, *partition.synth_end_ms) / 1e3,
                            constraints * abc_bytes_per_constraint, constraints, 0u, std::nullopt});
    stats.synthesis_lanes = std::max(stats.synthesis_lanes, lanes[i] + 1);
  }
  std::map<std::uint32_t, double> gpu_free_ms;  // per GPU, when its last section was released
  for (std::size_t index : section_order_) {
    const GpuCall& call = calls_[index];
    if (!call.kernels_known()) continue;
    lay_out_call(call, gpu_free_ms[place_of(call.worker).gpu], options, result);
    ++stats.calls_with_kernels;
  }
  std::set<std::string> jobs;
  std::set<std::uint32_t> gpus, workers;
  for (const Partition& partition : partitions_) jobs.insert(partition.job_id);
  for (const GpuCall& call : calls_) {
    gpus.insert(place_of(call.worker).gpu);
    workers.insert(call.worker);
    stats.workers_per_gpu = std::max(stats.workers_per_gpu, place_of(call.worker).index + 1);
    if (!call.kernels_known())
      ++stats.calls_without_kernels[call.section_overlapped
                                        ? "their GPU mutex sections overlapped others' (several GPUs, whose CUZK lines "
                                          "cannot be told apart)"
                                        : "the logs lack some of their CUZK lines (a log that begins or ends mid-call)"];
  }
  stats.workers_unannounced = std::size_t(std::ranges::count_if(workers, [&](std::uint32_t w) { return !announced_.contains(w); }));
  std::ranges::stable_sort(result.spans, {}, &trace::Span::start_s);
  stats.partitions = partitions_.size();
  stats.jobs = jobs.size();
  stats.gpu_calls = calls_.size();
  stats.gpus = std::uint32_t(gpus.size());
  add_utilization(result);
  result.sidecar = sidecar(options, stats);
  return result;
}

void Assembler::add_utilization(ImportResult& result) const {
  trace::Trace timeline;  // what TIMELINE's GPU_START..GPU_END of the same calls would call busy
  for (const trace::Span& span : result.spans)
    if (trace::is_gpu_kernel(span)) result.stats.kernel_busy_s += span.duration_s();
  for (std::size_t index : section_order_) {
    const GpuCall& call = calls_[index];
    const Partition& partition = partitions_[call.partition];
    if (!call.kernels_known() || !partition.end_ms) continue;
    timeline.push_back({"timeline", trace::Source::measured, std::uint32_t(call.partition), trace::Phase::ntt,
                        fmt::format("gpu{}:timeline", place_of(call.worker).gpu), call.start_ms / 1e3,
                        *partition.end_ms / 1e3});
  }
  result.stats.kernel_gpu_utilization = trace::summarize(result.spans).gpu_utilization;
  result.stats.timeline_gpu_utilization = trace::summarize(timeline).gpu_utilization;
}

nlohmann::json or_null(const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(nullptr); }

trace::Sidecar Assembler::sidecar(const ImportOptions& options, const ImportStats& stats) const {
  nlohmann::json partitions = nlohmann::json::array();
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    const Partition& p = partitions_[i];
    const GpuCall* call = p.call ? &calls_[*p.call] : nullptr;
    auto ms = [&](const std::optional<std::int64_t>& value) { return or_null(value ? std::optional(double(*value)) : std::nullopt); };
    partitions.push_back(
        {{"partition", i},
         {"job_id", p.job_id},
         {"cuzk_partition", p.cuzk_partition == no_partition ? nlohmann::json(nullptr) : nlohmann::json(p.cuzk_partition)},
         {"worker", p.worker ? nlohmann::json(*p.worker) : nlohmann::json(nullptr)},
         {"gpu_queue_ms", or_null(p.queued_ms && p.pickup_ms ? std::optional(*p.pickup_ms - *p.queued_ms) : std::nullopt)},
         {"mutex_wait_ms", call ? ms(call->mutex_wait_ms) : nullptr},
         {"cuzk_gpu_ms", or_null(p.gpu_ms)},
         {"prep_msm_ms", call ? ms(call->prep_msm_ms) : nullptr},
         {"b_g2_msm_ms", call ? ms(call->b_g2_ms) : nullptr}});
  }
  trace::Sidecar sidecar;
  sidecar.source = trace::Source::measured;
  sidecar.scenario = {.job = "cuzk",
                      .partitions = std::uint32_t(stats.partitions),
                      .constraints_per_partition = stats.constraints,
                      .partition_abc_bytes =
                          stats.constraints ? std::optional(*stats.constraints * abc_bytes_per_constraint) : std::nullopt,
                      .jobs = stats.jobs,
                      .logs = options.sources,
                      .cuzk_partitions = std::move(partitions)};
  const policy::Staging staging =
      options.staging.value_or(pinned_synthesis_seen_ ? policy::Staging::pinned : policy::Staging::pageable);
  sidecar.settings.job.synthesis_threads = std::max(1u, stats.synthesis_lanes);
  sidecar.settings.job.workers_per_gpu = std::max(1u, stats.workers_per_gpu);
  sidecar.settings.job.staging = sidecar.settings.copies_staging = staging;
  sidecar.settings.gpus = std::max(1u, stats.gpus);
  sidecar.machine = {.cores = options.cores, .pcie_h2d_gbps = options.pcie_h2d_gbps};
  sidecar.versions = {{"zkpipe", "import cuzk"}};
  return sidecar;
}

ImportResult import_with(const std::function<void(LogReader&)>& feed, const ImportOptions& options) {
  Assembler assembler;
  LogReader reader([&](const Record& record) { return assembler.take(record); });
  feed(reader);
  const std::string logs = fmt::format("{}", fmt::join(options.sources, ", "));
  if (reader.counts().cuzk_lines() == 0)
    throw std::runtime_error(fmt::format(
        "{}: no cuzk lines among {} lines (TIMELINE, CUZK_TIMING, CUZK_NTT_H, GPU_TIMING, FIN_TIMING): give the cuzk "
        "daemon's log, whose stderr holds the TIMELINE and CUZK lines",
        logs, reader.counts().read));
  ImportResult result = assembler.finish(options, reader.counts());
  if (result.spans.empty())
    throw std::runtime_error(fmt::format("{}: {} cuzk lines but no span: no SYNTH_START/SYNTH_END pair and no GPU call "
                                         "with its CUZK lines",
                                         logs, reader.counts().cuzk_lines()));
  return result;
}

}  // namespace

ImportResult import_logs(const std::vector<std::filesystem::path>& logs, ImportOptions options) {
  if (options.sources.empty())
    for (const std::filesystem::path& log : logs) options.sources.push_back(log.string());
  return import_with(
      [&](LogReader& reader) {
        for (const std::filesystem::path& log : logs) {
          std::ifstream in(log, std::ios::binary);
          if (!in) throw std::runtime_error(fmt::format("{}: cannot open the log", log.string()));
          std::string line;
          while (std::getline(in, line)) reader.read_line(line, !in.eof());
          if (in.bad()) throw std::runtime_error(fmt::format("{}: read error after {} lines", log.string(), reader.counts().read));
          reader.end_of_file();
        }
      },
      options);
}

ImportResult import_texts(const std::vector<std::string_view>& logs, const ImportOptions& options) {
  return import_with(
      [&](LogReader& reader) {
        for (std::string_view text : logs) {
          while (!text.empty()) {
            const std::size_t newline = text.find('\n');
            reader.read_line(text.substr(0, newline), newline != std::string_view::npos);
            text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
          }
          reader.end_of_file();
        }
      },
      options);
}

std::string format_import_summary(const ImportResult& result) {
  const LineCounts& l = result.lines;
  const ImportStats& s = result.stats;
  std::string text = fmt::format("import cuzk: {} partitions of {} jobs; {} GPU calls, {} with their kernel phases\n", s.partitions,
                                 s.jobs, s.gpu_calls, s.calls_with_kernels);
  for (const auto& [reason, calls] : s.calls_without_kernels)
    text += fmt::format("import cuzk: {} calls without kernel spans: {}\n", calls, reason);
  text += fmt::format(
      "import cuzk: GPU busy in kernel phases {:.3f} s; cuzk's gpu_ms of the same calls {:.3f} s (with the mutex wait, "
      "the barrier wait for prep_msm, b_g2's join and buffer frees); mutex waits {:.3f} s; GPU queue {:.3f} s\n",
      s.kernel_busy_s, s.cuzk_gpu_s, s.mutex_wait_s, s.gpu_queue_s);
  text += fmt::format("import cuzk: GPU utilization {:.1f} % by kernel phases, {:.1f} % by TIMELINE's GPU_START..GPU_END\n",
                      100 * s.kernel_gpu_utilization, 100 * s.timeline_gpu_utilization);
  if (s.sections_shifted_ms_max > 0)
    text += fmt::format("import cuzk: sections moved up to {:.0f} ms to begin after the previous release (ms rounding)\n",
                        s.sections_shifted_ms_max);
  if (!s.constraints_note.empty()) text += fmt::format("import cuzk: synthesis spans carry no constraints: {}\n", s.constraints_note);
  if (s.workers_unannounced > 0)
    text += fmt::format("import cuzk: {} workers had no 'pipeline GPU worker started' line: put on gpu0\n", s.workers_unannounced);
  text += trace::format_summary(trace::summarize(result.spans));
  return text + fmt::format(
                    "import cuzk: {} lines read: {} used, {} informational (cuzk lines with no zkpipe phase), {} "
                    "unattributed, {} malformed, {} torn pieces dropped ({} torn TIMELINE lines rejoined), {} partial (a "
                    "log's cut-off last line), {} not cuzk's\n",
                    l.read, l.used, l.informational, l.unattributed, l.malformed, l.torn_dropped, l.torn_rejoined,
                    l.partial, l.other);
}

void write_import(const std::filesystem::path& dir, const ImportResult& result) {
  std::filesystem::create_directories(dir);
  trace::write_csv_file(dir / "trace.csv", result.spans);
  trace::write_sidecar(trace::sidecar_path_for(dir / "trace.csv"), result.sidecar);
  trace::write_chrome_trace(dir / "trace.perfetto.json", result.spans);
}

}  // namespace zkpipe::model::cuzk
