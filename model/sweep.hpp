// Contract: runs every point of a scenario's [sweep], one forked process per point (SimGrid
// allows one engine per process), at most `parallel` at a time, and tabulates each point's
// swept settings beside the summary figures of its simulated trace. The table is written and
// read as CSV (header: the swept keys, then the metric names); the report's heatmap reads it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "scenario.hpp"

namespace zkpipe::model {

struct SweepTable {
  std::vector<std::string> columns;       // swept keys first, then metric names
  std::vector<std::vector<std::string>> rows;

  std::size_t column(const std::string& name) const;  // throws naming the missing column
};

// The figures each sweep point reports, in column order.
const std::vector<std::string>& sweep_metric_names();

SweepTable run_sweep(const std::vector<SweepPoint>& points, std::size_t parallel, const ChildProgress& progress = {});
void write_sweep_csv(const std::filesystem::path& path, const SweepTable& table);
// An aligned text table of the swept columns and the given metric columns, each figure rounded
// to three significant figures with its unit (52.1 %, 1.85/s, 3.39 GB/s, 0.05 s); the CSV keeps
// the exact values.
std::string format_sweep_table(const SweepTable& table, const std::vector<std::string>& metrics);
SweepTable read_sweep_csv(const std::filesystem::path& path);

}  // namespace zkpipe::model
