#include "sweep.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <libfccp/csv.h>

#include "engine/util/atomic_file.hpp"
#include "simulation.hpp"
#include "trace/summary.hpp"

namespace zkpipe::model {

const std::vector<std::string>& sweep_metric_names() {
  static const std::vector<std::string> names = {"makespan_s",  "partitions_per_s", "gpu_utilization", "h2d_gbps",
                                                 "wait_pool_s", "wait_budget_s",    "activities"};
  return names;
}

std::size_t SweepTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return i;
  throw std::runtime_error(fmt::format("sweep table has no column {}; sweep that key in the scenario", name));
}

SweepTable run_sweep(const std::vector<SweepPoint>& points, std::size_t parallel, const ChildProgress& progress) {
  if (points.empty()) throw std::runtime_error("the scenario has no [sweep] table: add one to sweep");
  SweepTable table;
  for (const auto& [key, value] : points.front().settings) table.columns.push_back(key);
  for (const std::string& metric : sweep_metric_names()) table.columns.push_back(metric);
  const std::vector<std::string> outputs = run_in_children(
      points.size(),
      [&](std::size_t index) {
        const SimulationResult result = simulate_in_this_process(points[index].scenario);
        const auto metrics = trace::summary_metrics(trace::summarize(result.spans));
        std::string figures;
        for (const std::string& name : sweep_metric_names()) {
          const auto found = std::ranges::find(metrics, name, &std::pair<std::string, double>::first);
          figures += name == "activities" ? fmt::format("{}\n", result.activities)  // a count: every digit
                                          : fmt::format("{:.9g}\n", found == metrics.end() ? 0.0 : found->second);
        }
        return figures;
      },
      parallel, progress);
  for (std::size_t index = 0; index < points.size(); ++index) {
    std::vector<std::string> row;
    for (const auto& [key, value] : points[index].settings) row.push_back(value);
    std::istringstream figures(outputs[index]);
    for (std::string figure; std::getline(figures, figure);) row.push_back(std::move(figure));
    table.rows.push_back(std::move(row));
  }
  return table;
}

namespace {

// `value` to three significant figures, in fixed notation: 1.85, 32.6, 541, 0.0012.
std::string three_figures(double value) {
  if (value == 0 || !std::isfinite(value)) return fmt::format("{}", value);
  const int decimals = std::clamp(2 - int(std::floor(std::log10(std::abs(value)))), 0, 9);
  return fmt::format("{:.{}f}", value, decimals);
}

// A metric's CSV cell as the text table shows it, rounded and with its unit, read from the
// metric's name: *utilization in %, *_gbps in GB/s, *_per_s per second, *_s in seconds; counts
// as they are.
std::string shown_metric(const std::string& metric, const std::string& cell) {
  const double value = std::stod(cell);
  if (metric.ends_with("utilization")) return fmt::format("{:.1f} %", 100 * value);
  if (metric.ends_with("_gbps")) return three_figures(value) + " GB/s";
  if (metric.ends_with("_per_s")) return three_figures(value) + "/s";
  if (metric.ends_with("_s")) return three_figures(value) + " s";
  return cell;
}

}  // namespace

std::string format_sweep_table(const SweepTable& table, const std::vector<std::string>& metrics) {
  const std::size_t swept = table.columns.size() - sweep_metric_names().size();
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < swept; ++i) shown.push_back(i);
  for (const std::string& metric : metrics) shown.push_back(table.column(metric));
  std::vector<std::vector<std::string>> lines = {{}};  // the heading, then one line per point
  for (std::size_t column : shown) lines.front().push_back(table.columns[column]);
  for (const auto& row : table.rows) {
    std::vector<std::string>& cells = lines.emplace_back();
    for (std::size_t column : shown)
      cells.push_back(column < swept ? row[column] : shown_metric(table.columns[column], row[column]));
  }
  std::vector<std::size_t> widths(shown.size(), 0);
  for (const auto& cells : lines)
    for (std::size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].size());
  std::string text;
  for (const auto& cells : lines) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) line += fmt::format("{}{:<{}}", i ? "  " : "", cells[i], widths[i]);
    line.erase(line.find_last_not_of(' ') + 1);
    text += line + "\n";
  }
  return text;
}

void write_sweep_csv(const std::filesystem::path& path, const SweepTable& table) {
  zk::write_file_atomically(path, [&table](std::ostream& out) {
    auto write_row = [&](const std::vector<std::string>& cells) {
      for (std::size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << cells[i];
      out << '\n';
    };
    write_row(table.columns);
    for (const auto& row : table.rows) write_row(row);
  });
}

SweepTable read_sweep_csv(const std::filesystem::path& path) {
  SweepTable table;
  try {
    io::LineReader lines(path.string());
    auto split = [](std::string_view line) {
      std::vector<std::string> cells;
      for (std::size_t comma; (comma = line.find(',')) != std::string_view::npos; line.remove_prefix(comma + 1))
        cells.emplace_back(line.substr(0, comma));
      cells.emplace_back(line);
      return cells;
    };
    const char* header = lines.next_line();
    if (!header) throw std::runtime_error(path.string() + ": empty sweep table");
    table.columns = split(header);
    while (const char* line = lines.next_line()) {
      if (!*line) continue;
      table.rows.push_back(split(line));
      if (table.rows.back().size() != table.columns.size())
        throw std::runtime_error(fmt::format("{}:{}: {} cells where the header has {}", path.string(),
                                             lines.get_file_line(), table.rows.back().size(), table.columns.size()));
    }
  } catch (const io::error::base& error) {
    throw std::runtime_error(fmt::format("cannot read sweep table {}: {}", path.string(), error.what()));
  }
  return table;
}

}  // namespace zkpipe::model
