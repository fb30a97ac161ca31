#include "scenario.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "engine/util/text_file.hpp"

namespace zkpipe::model {

double H2dPathCost::rate_gbps(double link_gbps, double loading_threads) const {
  const double t = loading_threads;
  return 1.0 / (1.0 / link_gbps + overhead_s_per_gb + per_thread_s_per_gb * t +
                per_thread_squared_s_per_gb * t * t);
}

double synthesis_cores_factor(const std::map<std::uint32_t, double>& factors, double cores) {
  if (factors.empty()) return 1;
  const auto above = factors.lower_bound(std::uint32_t(std::ceil(cores)));
  if (above == factors.begin()) return above->second;
  if (above == factors.end()) return std::prev(above)->second;
  const auto below = std::prev(above);
  const double at = (1 / double(below->first) - 1 / cores) / (1 / double(below->first) - 1 / double(above->first));
  return below->second + at * (above->second - below->second);
}

policy::JobShape Scenario::job_shape() const {
  return {{workload.partitions, workload.partition_abc_bytes(), workload.host_witness_bytes, workload.host_key_bytes},
          workload.host_worker_bytes,
          workload.host_worker_bytes};
}

policy::PolicySettings Scenario::policy_settings() const {
  return policy::policy_settings(policy, job_shape(), hardware.gpus);
}

faults::FaultOptions Scenario::fault_options() const {
  faults::FaultOptions options = faults;
  options.seed = seed;
  options.pinned_allocation_failure_probability = faults.pinned_allocation_fails ? 1 : 0;
  return options;
}

namespace {

// Where each dotted key was written. Copies of toml++ nodes lose their source regions, and a
// scenario is a merge of copies (calibration, scenario, sweep values), so positions are taken
// from the parsed files before merging.
using SourceMap = std::map<std::string, toml::source_region>;

void collect_sources(const toml::table& table, const std::string& prefix, SourceMap& sources) {
  for (const auto& [key, node] : table) {
    const std::string dotted = prefix + std::string(key.str());
    sources[dotted] = node.source();
    if (const toml::table* child = node.as_table()) collect_sources(*child, dotted + ".", sources);
  }
}

std::string where(const SourceMap& sources, const std::string& dotted_key, const std::string& origin) {
  const auto found = sources.find(dotted_key);
  if (found == sources.end() || !found->second.begin.line) return origin;
  const auto& source = found->second;
  return fmt::format("{}:{}", source.path ? *source.path : origin, source.begin.line);
}

// Reads one TOML table strictly: every key must be asked for, every value in range.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix, std::string origin, const SourceMap& sources)
      : table_(table), prefix_(std::move(prefix)), origin_(std::move(origin)), sources_(sources) {}

  [[noreturn]] void fail(std::string_view key, const std::string& what) const {
    const std::string dotted = prefix_ + std::string(key);
    throw ScenarioError(fmt::format("{}: {}: {}", where(sources_, dotted, origin_), dotted, what));
  }

  // Where this table was written ("file:line"), for errors about what it lacks.
  std::string location() const {
    return where(sources_, prefix_.empty() ? "" : prefix_.substr(0, prefix_.size() - 1), origin_);
  }

  const toml::node* find(std::string_view key) {
    known_.insert(std::string(key));
    return table_.get(key);
  }

  double number(std::string_view key, double fallback, double min, double max) {
    const toml::node* node = find(key);
    if (!node) return fallback;
    const auto value = node->value<double>();
    if (!value || !(node->is_integer() || node->is_floating_point()))
      fail(key, "expected a number");
    if (!(*value >= min && *value <= max))
      fail(key, fmt::format("{} is out of range [{}, {}]; fix the value", *value, min, max));
    return *value;
  }

  double required_number(std::string_view key, double min, double max) {
    if (!table_.get(key))
      throw ScenarioError(fmt::format(
          "{}: missing {}{}: set it, or include a calibration file that sets it (calibration = \"...\")",
          location(), prefix_, key));
    return number(key, 0, min, max);
  }

  std::uint64_t integer(std::string_view key, std::uint64_t fallback, std::uint64_t min,
                        std::uint64_t max) {
    const toml::node* node = find(key);
    if (!node) return fallback;
    if (!node->is_integer()) fail(key, "expected an integer");
    const std::int64_t value = *node->value<std::int64_t>();
    if (value < std::int64_t(min) || std::uint64_t(value) > max)
      fail(key, fmt::format("{} is out of range [{}, {}]; fix the value", value, min, max));
    return std::uint64_t(value);
  }

  // One of an enum's names (engine/util/enum_names.hpp), as its value.
  template <typename Enum, std::size_t N>
  Enum choice(std::string_view key, Enum fallback, const zk::EnumNames<Enum, N>& names) {
    const toml::node* node = find(key);
    if (!node) return fallback;
    const auto value = node->value<std::string>();
    const std::optional<Enum> chosen = value ? zk::value_of(names, *value) : std::nullopt;
    if (!chosen) fail(key, fmt::format("expected one of {}", zk::joined_names(names, ", ", "\"")));
    return *chosen;
  }

  bool boolean(std::string_view key, bool fallback) {
    const toml::node* node = find(key);
    if (!node) return fallback;
    if (!node->is_boolean()) fail(key, "expected true or false");
    return *node->value<bool>();
  }

  std::string text(std::string_view key, std::string fallback) {
    const toml::node* node = find(key);
    if (!node) return fallback;
    if (!node->is_string()) fail(key, "expected a string");
    return *node->value<std::string>();
  }

  // An array of numbers, each `valid` (else "expected <numbers>"); empty when absent.
  template <class Valid>
  std::vector<double> numbers(std::string_view key, Valid&& valid, std::string_view numbers) {
    const toml::node* node = find(key);
    if (node && !node->is_array()) fail(key, "expected an array");
    static const toml::array none;
    std::vector<double> values;
    for (const toml::node& element : node ? *node->as_array() : none) {
      const auto value = element.value<double>();
      if (!value || !valid(*value)) fail(key, fmt::format("expected {}", numbers));
      values.push_back(*value);
    }
    return values;
  }

  // The sub-table `key` (an empty table when absent).
  TableReader table(std::string_view key) {
    const toml::node* node = find(key);
    if (node && !node->is_table()) fail(key, "expected a table [" + prefix_ + std::string(key) + "]");
    return TableReader(node ? *node->as_table() : empty_, prefix_ + std::string(key) + ".", origin_, sources_);
  }

  const toml::table& raw() const { return table_; }
  const std::string& origin() const { return origin_; }
  const std::string& prefix() const { return prefix_; }
  const SourceMap& sources() const { return sources_; }

  void mark_known(std::string_view key) { known_.insert(std::string(key)); }

  void reject_unknown_keys() const {
    for (const auto& [key, node] : table_)
      if (!known_.contains(std::string(key.str())))
        fail(key.str(), "unknown key; see scenarios/README.md for the keys a scenario takes");
  }

 private:
  static inline const toml::table empty_{};
  const toml::table& table_;
  std::string prefix_;
  std::string origin_;
  std::set<std::string> known_;
  const SourceMap& sources_;
};

constexpr int max_loading_threads = 256;

H2dPathCost read_h2d_path(TableReader table, double link_gbps) {
  H2dPathCost cost;
  // Fitted terms may be slightly negative; what must hold is a positive time per GB.
  cost.overhead_s_per_gb = table.required_number("overhead_s_per_gb", -100, 100);
  cost.per_thread_s_per_gb = table.required_number("per_thread_s_per_gb", -100, 100);
  cost.per_thread_squared_s_per_gb = table.required_number("per_thread_squared_s_per_gb", -100, 100);
  for (int threads = 0; threads <= max_loading_threads; ++threads)
    if (!(cost.rate_gbps(link_gbps, threads) > 0))
      throw ScenarioError(fmt::format("{}: [{}]: the H2D cost gives no positive rate at {} loading threads; refit it",
                                      table.location(), table.prefix(), threads));
  table.reject_unknown_keys();
  return cost;
}

// [gpu_phase_cost.<phase>] for each GPU phase simulated: at least one, and tail_msm (supraseal's
// A, B1 and L tails together) or those three, not both.
std::map<trace::Phase, PhaseCost> read_gpu_phase_costs(TableReader& root) {
  std::map<trace::Phase, PhaseCost> costs;
  TableReader phases = root.table("gpu_phase_cost");
  for (const auto& [key, node] : phases.raw()) {
    const auto phase = trace::parse_phase(key.str());
    if (!phase || !trace::is_gpu_compute(*phase))
      phases.fail(key.str(), "not a GPU compute phase (ntt, msm_h, msm_l, msm_a, msm_b1, msm_b2, batch_add, tail_msm)");
    TableReader cost = phases.table(key.str());
    std::optional<double> stream_chunk_s;
    if (cost.raw().contains("stream_chunk_s")) stream_chunk_s = cost.number("stream_chunk_s", 0, 0, 1e4);
    costs[*phase] = {cost.number("fixed_s", 0, -1e4, 1e4), cost.number("per_mitem_s", 0, 0, 1e4), stream_chunk_s};
    cost.reject_unknown_keys();
  }
  if (costs.contains(trace::Phase::tail_msm))
    for (const trace::Phase msm : {trace::Phase::msm_a, trace::Phase::msm_b1, trace::Phase::msm_l})
      if (costs.contains(msm))
        phases.fail(trace::phase_name(msm),
                    "tail_msm is the tail MSMs of A, B1 and L together (supraseal's order): give it or their own costs, not both");
  if (costs.empty())
    throw ScenarioError(fmt::format("{}: no [gpu_phase_cost.<phase>] table: give at least one GPU phase's cost, or include a calibration file",
                                    root.location()));
  return costs;
}

// [synthesis] factor_cores = [k...] and cores_factors = [f...]: the share factor's measured
// correction on k cores (Calibration::synth_cores_factors), both or neither.
void read_cores_factors(TableReader& synthesis, std::map<std::uint32_t, double>& factors) {
  const std::vector<double> cores = synthesis.numbers(
      "factor_cores", [](double k) { return k >= 1 && k <= 1 << 20 && k == std::floor(k); }, "whole numbers of cores");
  const std::vector<double> values = synthesis.numbers(
      "cores_factors", [](double factor) { return factor > 0 && factor <= 100; }, "numbers in (0, 100]");
  if (cores.size() != values.size())
    synthesis.fail("cores_factors", fmt::format("{} factors for {} factor_cores; give one a core count", values.size(),
                                                cores.size()));
  for (std::size_t i = 0; i < cores.size(); ++i)
    if (!factors.emplace(std::uint32_t(cores[i]), values[i]).second)
      synthesis.fail("factor_cores", fmt::format("{} cores listed twice", cores[i]));
}

Calibration read_calibration(TableReader& root, double link_gbps) {
  Calibration calibration;
  TableReader h2d = root.table("h2d");
  calibration.h2d_pinned = read_h2d_path(h2d.table("pinned"), link_gbps);
  calibration.h2d_pageable = read_h2d_path(h2d.table("pageable"), link_gbps);
  h2d.reject_unknown_keys();

  TableReader synthesis = root.table("synthesis"), cpu = root.table("cpu");
  // A value whose default lies outside its range (the synthesis cost) must be given.
  for_each_calibration_value(
      [&](std::string_view table, const char* key, double min, double max, auto& value) {
        TableReader& reader = table == "cpu" ? cpu : synthesis;
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, bool>) value = reader.boolean(key, value);
        else value = value >= min ? reader.number(key, value, min, max) : reader.required_number(key, min, max);
      },
      calibration);
  calibration.synth_time_factors =
      synthesis.numbers("time_factors", [](double factor) { return factor > 0 && factor <= 100; }, "numbers in (0, 100]");
  read_cores_factors(synthesis, calibration.synth_cores_factors);
  calibration.host_work_load_factors = cpu.numbers(
      "host_work_load_factors", [](double factor) { return factor > 0 && factor <= 100; }, "numbers in (0, 100]");
  synthesis.reject_unknown_keys();
  cpu.reject_unknown_keys();

  calibration.gpu_phase_cost = read_gpu_phase_costs(root);
  return calibration;
}

// The [policy] settings resolved as the engine resolves its own: workers and the key's residency
// fitted into the device budget where the scenario gives one and what the backend holds (a streamed
// key's points are copied inside every MSM), then every setting left to choose chosen from the
// hardware and the workload.
void resolve_policy(Scenario& scenario, const std::string& origin) {
  const Workload& workload = scenario.workload;
  PolicyKnobs& knobs = scenario.policy;
  try {
    if (knobs.device_budget_bytes != 0 && workload.device.holds_device_memory())
      scenario.device_plan_change =
          policy::fit_device_memory(knobs, workload.device, policy::partitions_per_gpu(workload.partitions, scenario.hardware.gpus))
              .change;
  } catch (const std::invalid_argument& error) {
    throw ScenarioError(fmt::format("{}: [policy] device_budget_gib: {}", origin, error.what()));
  }
  const policy::HostFacts host{scenario.hardware.cores, scenario.hardware.host_memory_bytes, scenario.hardware.gpus, true};
  try {
    static_cast<policy::JobSettings&>(knobs) =
        policy::resolve_job_settings(knobs, scenario.job_shape(), host, policy::scenario_names);
    policy::validate(scenario.policy_settings());
  } catch (const std::invalid_argument& error) {
    throw ScenarioError(fmt::format("{}: [policy]: {}", origin, error.what()));
  }
}

// The scenario's tables, each read into its part: a key out of range, mistyped or unknown is a
// ScenarioError naming the table and the key.
void read_hardware(TableReader hardware, Hardware& out) {
  out.cores = std::uint32_t(hardware.integer("cores", 16, 1, 4096));
  out.host_memory_bytes = std::uint64_t(hardware.number("host_memory_gib", 128, 0.001, 1e6) * bytes_per_gib);
  out.host_memory_gbps = hardware.number("host_memory_gbps", 150, 1, 1e5);
  const bool generation_given = hardware.raw().contains("pcie_generation");
  const bool rate_given = hardware.raw().contains("pcie_h2d_gbps");
  if (generation_given && rate_given)
    hardware.fail("pcie_h2d_gbps", "give pcie_generation or pcie_h2d_gbps, not both");
  out.pcie_h2d_gbps = rate_given ? hardware.number("pcie_h2d_gbps", 0, 0.1, 1e4)
                                 : pcie_generation_gbps(hardware.integer("pcie_generation", 5, 3, 6));
  out.copy_engines_h2d = std::uint32_t(hardware.integer("copy_engines_h2d", 1, 1, 8));
  out.gpus = std::uint32_t(hardware.integer("gpus", 1, 1, 64));
  out.h2d_chunk_bytes = hardware.integer("h2d_chunk_mib", 64, 1, 1 << 16) << 20;
  out.pins_host_memory = hardware.boolean("pins_host_memory", true);
  hardware.reject_unknown_keys();
}

void read_workload(TableReader workload, Workload& out) {
  out.partitions = std::uint32_t(workload.integer("partitions", 8, 1, 1'000'000));
  out.constraints_per_partition = workload.integer("constraints_per_partition", 1ull << 24, 1, 1ull << 32);
  out.bytes_per_constraint = workload.number("bytes_per_constraint", 96, 1, 4096);
  out.zero_scalar_share = workload.number("zero_scalar_share", 0, 0, 1);
  out.one_scalar_share = workload.number("one_scalar_share", 0, 0, 1);
  if (out.zero_scalar_share + out.one_scalar_share > 1)
    workload.fail("one_scalar_share", "zero_scalar_share + one_scalar_share exceeds 1");
  out.b_absent_one_share = workload.number("b_absent_one_share", 0, 0, out.one_scalar_share);
  out.b_absent_significant_share =
      workload.number("b_absent_significant_share", 0, 0, 1 - out.zero_scalar_share - out.one_scalar_share);
  out.variables = workload.integer("variables", 0, 0, 1ull << 32);
  out.public_inputs = std::uint32_t(workload.integer("public_inputs", 0, 0, 1ull << 31));
  out.public_inputs_one = std::uint32_t(workload.integer("public_inputs_one", 0, 0, out.public_inputs));
  out.public_inputs_zero =
      std::uint32_t(workload.integer("public_inputs_zero", 0, 0, out.public_inputs - out.public_inputs_one));
  out.stream_chunk_points = workload.integer("stream_chunk_points", policy::default_stream_chunk_points, 1, 1ull << 32);
  out.witness_upload_bytes = std::uint64_t(workload.number("witness_upload_mib", 0, 0, 1 << 20) * double(1 << 20));
  const auto mib = [&](const char* key) { return std::uint64_t(workload.number(key, 0, 0, 1 << 30) * bytes_per_mib); };
  out.device = {mib("device_key_mib"), mib("device_shared_mib"), mib("device_worker_mib"), mib("device_streaming_mib"), {}};
  out.host_witness_bytes = mib("host_witness_mib");
  out.host_key_bytes = mib("host_key_mib");
  out.host_worker_bytes = mib("host_worker_mib");
  workload.reject_unknown_keys();
}

void read_policy_knobs(TableReader policy_table, PolicyKnobs& knobs) {
  // Absent (or 0): chosen as the engine chooses (policy::resolve_job_settings).
  knobs.synthesis_threads = std::uint32_t(policy_table.integer("synthesis_threads", 0, 0, 4096));
  knobs.synthesis_core_share =
      policy_table.choice("synthesis_core_share", SynthesisCoreShare::pooled, synthesis_core_share_names);
  knobs.partitions_in_flight = std::uint32_t(policy_table.integer("partitions_in_flight", 0, 0, 100'000));
  if (policy_table.raw().contains("staging"))
    knobs.staging = policy_table.choice("staging", policy::Staging::pinned, policy::staging_names);
  knobs.pool_slabs = std::uint32_t(policy_table.integer("pool_slabs", 0, 0, 4096));
  knobs.pool_layout = policy_table.choice("pool_layout", knobs.pool_layout, policy::pool_layout_names);
  knobs.host_budget_bytes = std::uint64_t(policy_table.number("host_budget_gib", 0, 0, 1e6) * bytes_per_gib);
  knobs.workers_per_gpu = std::uint32_t(policy_table.integer("workers_per_gpu", knobs.workers_per_gpu, 1, 64));
  knobs.srs_residency = policy_table.choice("srs_residency", knobs.srs_residency, policy::srs_residency_names);
  knobs.retry_limit = std::uint32_t(policy_table.integer("retry_limit", knobs.retry_limit, 0, 100));
  knobs.device_budget_bytes = std::uint64_t(policy_table.number("device_budget_gib", 0, 0, 1e6) * bytes_per_gib);
  policy_table.reject_unknown_keys();
}

void read_faults(TableReader faults, Faults& out) {
  out.gpu_error_probability = faults.number("gpu_error_probability", 0, 0, 0.9);
  out.pinned_allocation_fails = faults.boolean("pinned_allocation_fails", false);
  out.worker_death_s = faults.numbers("worker_death_s", [](double seconds) { return !(seconds < 0); }, "seconds >= 0");
  out.worker_death_probability = faults.number("worker_death_probability", 0, 0, 1);
  out.slow_transfer_probability = faults.number("slow_transfer_probability", 0, 0, 1);
  out.slow_transfer_factor = faults.number("slow_transfer_factor", 4, 1, 1e6);
  out.stalled_transfer_probability = faults.number("stalled_transfer_probability", 0, 0, 1);
  out.stalled_transfer_s = faults.number("stalled_transfer_s", 1, 0, 1e6);
  if (out.slow_transfer_probability + out.stalled_transfer_probability > 1)
    faults.fail("stalled_transfer_probability", "slow_transfer_probability + stalled_transfer_probability must be <= 1");
  faults.reject_unknown_keys();
}

Scenario read_scenario(const toml::table& table, const std::string& origin, const SourceMap& sources) {
  Scenario scenario;
  scenario.table = table;
  TableReader root(table, "", origin, sources);
  scenario.name = root.text("name", std::filesystem::path(origin).stem().string());
  // the name is the trace's run column: keep it to characters CSV and file names take as they are
  if (scenario.name.empty() || scenario.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                "0123456789._-+") != std::string::npos)
    root.fail("name", fmt::format("'{}' must be letters, digits and . _ - + only", scenario.name));
  scenario.seed = root.integer("seed", 1, 0, std::numeric_limits<std::int64_t>::max());
  root.mark_known("calibration");

  read_hardware(root.table("hardware"), scenario.hardware);
  read_workload(root.table("workload"), scenario.workload);
  read_policy_knobs(root.table("policy"), scenario.policy);
  resolve_policy(scenario, origin);
  scenario.calibration = read_calibration(root, scenario.hardware.pcie_h2d_gbps);
  read_faults(root.table("faults"), scenario.faults);
  root.reject_unknown_keys();
  return scenario;
}

void merge_into(toml::table& base, const toml::table& overlay) {
  for (const auto& [key, node] : overlay) {
    toml::node* existing = base.get(key);
    if (existing && existing->is_table() && node.is_table())
      merge_into(*existing->as_table(), *node.as_table());
    else
      base.insert_or_assign(key, node);
  }
}

void set_at_path(toml::table& table, const std::string& dotted_key, const toml::node& value) {
  toml::table* current = &table;
  std::string_view rest = dotted_key;
  for (std::size_t dot; (dot = rest.find('.')) != std::string_view::npos; rest.remove_prefix(dot + 1)) {
    const std::string part(rest.substr(0, dot));
    if (!current->contains(part)) current->insert(part, toml::table{});
    toml::node* next = current->get(part);
    if (!next->is_table())
      throw ScenarioError(fmt::format("setting {}: {} is not a table", dotted_key, part));
    current = next->as_table();
  }
  current->insert_or_assign(std::string(rest), value);
}

std::string value_text(const toml::node& node) {
  if (const auto text = node.value<std::string>(); node.is_string()) return *text;
  std::ostringstream out;
  node.visit([&](const auto& value) { out << value; });
  return out.str();
}

toml::table parse_toml(std::string_view text, const std::string& origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& error) {
    throw ScenarioError(fmt::format("{}:{}: {}", origin, error.source().begin.line, error.description()));
  }
}

// Points of one sweep at most (each one a simulation): a range or a product of lists beyond it is
// refused before it is expanded.
constexpr std::size_t max_sweep_points = 10'000;

std::vector<toml::array> sweep_values(TableReader& sweep) {
  std::vector<toml::array> axes;
  std::size_t points = 1;
  for (const auto& [key, node] : sweep.raw()) {
    sweep.mark_known(key.str());
    toml::array values;
    if (const toml::array* list = node.as_array()) {
      values = *list;
    } else if (const toml::table* range = node.as_table()) {
      TableReader reader(*range, "sweep." + std::string(key.str()) + ".", sweep.origin(), sweep.sources());
      const double from = reader.number("from", 0, -1e12, 1e12);
      const double to = reader.number("to", 0, -1e12, 1e12);
      const double step = reader.number("step", 1, 1e-12, 1e12);
      reader.reject_unknown_keys();
      const bool integers = (*range)["from"].is_integer() && (*range)["to"].is_integer() &&
                            (!range->contains("step") || (*range)["step"].is_integer());
      const double steps = std::floor((to - from) / step + 1e-9);  // values: steps + 1 (none when to < from)
      if (steps >= double(max_sweep_points))
        sweep.fail(key.str(), fmt::format("the range gives more than {} values; make the step larger", max_sweep_points));
      for (double i = 0; i <= steps; ++i) {
        const double value = from + i * step;
        integers ? values.push_back(std::int64_t(std::llround(value))) : values.push_back(value);
      }
    } else {
      sweep.fail(key.str(), "expected a list of values or a range { from, to, step }");
    }
    if (values.empty()) sweep.fail(key.str(), "the sweep gives no values");
    points *= values.size();
    if (points > max_sweep_points)
      sweep.fail(key.str(), fmt::format("the sweep has more than {} points (the product of every key's values); "
                                        "split it into several files", max_sweep_points));
    axes.push_back(std::move(values));
  }
  return axes;
}

// The scenario's own table over the calibration files it includes (`calibration`: one file name, or
// a list merged in order; paths relative to `directory`), with where each key was written.
toml::table with_calibrations(const toml::table& own, const std::string& origin, const std::filesystem::path& directory,
                              SourceMap& sources) {
  toml::table merged;
  collect_sources(own, "", sources);
  if (const toml::node* include = own.get("calibration")) {
    std::vector<std::string> files;
    if (const auto single = include->value<std::string>()) files.push_back(*single);
    if (const toml::array* list = include->as_array())
      for (const toml::node& entry : *list)
        if (const auto name = entry.value<std::string>()) files.push_back(*name);
    if (files.empty() || (include->is_array() && files.size() != include->as_array()->size()))
      throw ScenarioError(fmt::format("{}: calibration: expected a file name or a list of file names",
                                      where(sources, "calibration", origin)));
    for (const std::string& file : files) {
      const std::filesystem::path path = directory / file;
      const auto calibration_text = zk::read_text_file(path);
      if (!calibration_text)
        throw ScenarioError(fmt::format("{}: calibration: cannot open {}; the path is relative to the scenario file",
                                        where(sources, "calibration", origin), path.string()));
      const toml::table calibration = parse_toml(*calibration_text, path.string());
      collect_sources(calibration, "", sources);
      merge_into(merged, calibration);
    }
  }
  collect_sources(own, "", sources);  // the scenario's own keys win, in values and in positions
  merge_into(merged, own);
  return merged;
}

// Every point of the [sweep] over `base`: the product of its keys' values, the last key fastest.
// A point's error names its settings and points at the sweep's line.
std::vector<SweepPoint> sweep_points(const toml::table& base, const toml::table& sweep_table, const std::string& origin,
                                     const SourceMap& sources) {
  TableReader sweep(sweep_table, "sweep.", origin, sources);
  const std::vector<toml::array> axes = sweep_values(sweep);
  std::vector<SweepPoint> points;
  if (axes.empty()) return points;
  std::vector<std::string> keys;
  for (const auto& [key, node] : sweep_table) keys.emplace_back(key.str());
  SourceMap point_sources = sources;
  for (const std::string& key : keys)
    if (const auto found = sources.find("sweep." + key); found != sources.end()) point_sources[key] = found->second;
  std::vector<std::size_t> index(axes.size(), 0);
  while (true) {
    toml::table point_table = base;
    SweepPoint point;
    for (std::size_t axis = 0; axis < axes.size(); ++axis) {
      const toml::node& value = *axes[axis].get(index[axis]);
      set_at_path(point_table, keys[axis], value);
      point.settings.emplace_back(keys[axis], value_text(value));
    }
    try {
      point.scenario = read_scenario(point_table, origin, point_sources);
    } catch (const ScenarioError& error) {
      std::string settings;
      for (const auto& [key, value] : point.settings) settings += fmt::format(" {}={}", key, value);
      throw ScenarioError(fmt::format("{} (in the sweep point{})", error.what(), settings));
    }
    points.push_back(std::move(point));
    std::size_t axis = axes.size();
    while (axis > 0 && ++index[axis - 1] == axes[axis - 1].size()) index[--axis] = 0;
    if (axis == 0) return points;
  }
}

}  // namespace

double pcie_generation_gbps(std::uint64_t generation) {
  // x16 host-to-device; Gen5 is the H200 host's measured 55.3 GB/s, each older generation half.
  return 55.3 / std::pow(2.0, double(5 - std::int64_t(generation)));
}

LoadedScenario parse_scenario_text(std::string_view text, const std::string& origin,
                                   const std::filesystem::path& directory) {
  const toml::table own = parse_toml(text, origin);
  SourceMap sources;
  toml::table merged = with_calibrations(own, origin, directory, sources);
  toml::table sweep_table;
  if (toml::node* sweep = merged.get("sweep")) {
    if (!sweep->is_table())
      throw ScenarioError(fmt::format("{}: sweep: expected a table [sweep]", where(sources, "sweep", origin)));
    sweep_table = *sweep->as_table();
    merged.erase("sweep");
  }
  LoadedScenario loaded;
  loaded.base = read_scenario(merged, origin, sources);
  loaded.sweep_points = sweep_points(merged, sweep_table, origin, sources);
  return loaded;
}

LoadedScenario load_scenario_file(const std::filesystem::path& path) {
  const auto text = zk::read_text_file(path);
  if (!text) throw ScenarioError(fmt::format("cannot open scenario {}: check the path", path.string()));
  LoadedScenario loaded = parse_scenario_text(*text, path.string(), path.parent_path());
  loaded.base.file = path;
  for (SweepPoint& point : loaded.sweep_points) point.scenario.file = path;
  return loaded;
}

Scenario with_setting(const Scenario& scenario, const std::string& key, const std::string& value_toml) {
  const toml::table parsed = parse_toml("value = " + value_toml, "setting " + key);
  toml::table table = scenario.table;
  if (!table.contains("name")) table.insert("name", scenario.name);  // else named after the origin
  set_at_path(table, key, *parsed.get("value"));
  Scenario changed = read_scenario(table, "setting " + key, SourceMap{});
  changed.file = scenario.file;
  return changed;
}

}  // namespace zkpipe::model
