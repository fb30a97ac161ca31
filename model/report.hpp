// Contract: renders one self-contained HTML page (no network, no external files) that puts runs
// side by side, typically a measured trace and its simulation: the summaries, per-run timelines
// (one lane per resource, coloured by phase, with a time axis, zoom and hover), host-to-device
// GB/s of every copy at its true rate (bytes / duration, drawn over the copy's interval: a/b/c
// copies and uploads without items, the witness or streamed key points, apart), GPU busy over
// time, the per-phase breakdown (seconds per partition), the partitions waiting on the pinned
// pool and on the memory budget over time, the measured-vs-simulated comparison, the validation
// table of `zkpipe validate`, and the sweep's predicted GPU utilization over synthesis threads x
// pool slabs with measured points marked.
//
// The page draws with Apache ECharts (tools/report/package.json), whose minified script is inlined
// into the page with the page's own script (report_page.js, built into the binary) and the data
// (report_data, JSON). read_chart_library gives one clear error where the script is missing.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep.hpp"
#include "trace/sidecar.hpp"
#include "trace/trace.hpp"

namespace zkpipe::model {

// The colour of the phase at this index of the schema's phases (trace::Phase): hues a golden
// angle (137.5 degrees) apart, at one of three lightness levels, so every phase the schema has or
// will add gets a colour, consecutive phases contrast, and the first 64 are all distinct.
std::string phase_colour(std::size_t phase_index);

struct ReportRun {
  std::string label;  // "measured: <file>", "simulated: <file>"
  trace::Trace spans;
};

// A measured run placed on the sweep's heatmap: its settings and its measured GPU utilization.
struct MeasuredPoint {
  std::string name;
  long synthesis_threads = 0;
  long pool_slabs = 0;
  double gpu_utilization = 0;
};

// The point a measured run puts on the heatmap: its sidecar's synthesis threads and pool slabs
// (pinned staging only: pageable runs hold no slabs) and its trace's GPU utilization.
std::optional<MeasuredPoint> heatmap_point(const std::string& name, const trace::Sidecar& sidecar, const trace::Trace& spans);

struct ReportInputs {
  std::string title;
  std::vector<ReportRun> runs;  // one or more; with two, the first is the measurement, the second its prediction
  std::optional<SweepTable> sweep;  // with policy.synthesis_threads, policy.pool_slabs, gpu_utilization columns
  std::vector<MeasuredPoint> measured_points;
  std::optional<std::string> validation_markdown;  // validation.md as zkpipe validate writes it
};

// What the page draws, per run and for the whole report (the layout report_page.js reads):
// times in seconds from each run's first span start.
nlohmann::json report_data(const ReportInputs& inputs);

std::string render_report(const ReportInputs& inputs, const std::string& chart_library_script);

// The ECharts script that tools/install-deps.sh installs (npm, tools/report).
std::filesystem::path default_chart_library_path();
// The file's text; throws, naming the file and how to install it, where it is missing or empty.
std::string read_chart_library(const std::filesystem::path& path);
// validation.md's text; throws, naming the file and which, where it cannot be read or is empty.
std::string read_validation_file(const std::filesystem::path& path);

}  // namespace zkpipe::model
