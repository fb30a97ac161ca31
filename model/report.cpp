#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "trace/summary.hpp"

namespace zkpipe::model {

namespace {

constexpr int chart_width = 960;
constexpr int label_width = 110;

std::string escape_html(std::string_view text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '&': escaped += "&amp;"; break;
      case '"': escaped += "&quot;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

// Resources in display order: GPU workers, PCIe, then CPU threads (numerically).
std::vector<std::string> ordered_resources(const trace::Trace& spans) {
  std::set<std::string> names;
  for (const trace::Span& span : spans) names.insert(span.resource);
  std::vector<std::string> ordered(names.begin(), names.end());
  auto rank = [](const std::string& name) {
    const int group = name.starts_with("gpu") ? 0 : name.starts_with("pcie") ? 1 : 2;
    const auto colon = name.find(':');
    int number = 0;
    if (colon != std::string::npos) {
      const std::string tail = name.substr(colon + 1);
      number = std::isdigit(static_cast<unsigned char>(tail.front())) ? std::atoi(tail.c_str()) : -1;
    }
    return std::tuple(group, name.substr(0, colon), number, name);
  };
  std::ranges::sort(ordered, {}, rank);
  return ordered;
}

std::string timeline_svg(const trace::Trace& spans, double begin_s, double makespan_s) {
  const std::vector<std::string> resources = ordered_resources(spans);
  std::map<std::string, std::size_t> row_of;
  for (std::size_t i = 0; i < resources.size(); ++i) row_of[resources[i]] = i;
  const int row_height = 14;
  const int height = int(resources.size()) * row_height + 24;
  const double scale = (chart_width - label_width - 10) / std::max(makespan_s, 1e-12);
  std::string svg = fmt::format(R"(<svg class="chart" id="timeline" width="{}" height="{}" xmlns="http://www.w3.org/2000/svg">)",
                                chart_width, height);
  for (std::size_t i = 0; i < resources.size(); ++i)
    svg += fmt::format(R"(<text x="2" y="{}" font-size="11">{}</text>)", int(i) * row_height + 11, escape_html(resources[i]));
  for (const trace::Span& span : spans) {
    const double x = label_width + (span.start_s - begin_s) * scale;
    const double width = std::max(span.duration_s() * scale, 0.5);
    svg += fmt::format(R"(<rect x="{:.2f}" y="{}" width="{:.2f}" height="{}" fill="{}"><title>{} p{} {:.4f}-{:.4f} s</title></rect>)",
                       x, int(row_of[span.resource]) * row_height + 1, width, row_height - 2, phase_colour(std::size_t(span.phase)),
                       trace::phase_name(span.phase), span.partition, span.start_s, span.end_s);
  }
  const int axis_y = int(resources.size()) * row_height + 16;
  svg += fmt::format(R"(<text x="{}" y="{}" font-size="11">0 s</text><text x="{}" y="{}" font-size="11" text-anchor="end">{:.3f} s</text></svg>)",
                     label_width, axis_y, chart_width - 10, axis_y, makespan_s);
  return svg;
}

std::string bandwidth_svg(const trace::Trace& spans, double begin_s, double makespan_s) {
  constexpr int bins = 200;
  constexpr int height = 220, plot_height = 180;
  std::vector<double> bytes(bins, 0.0);
  const double bin_s = std::max(makespan_s, 1e-12) / bins;
  for (const trace::Span& span : spans) {
    if (span.phase != trace::Phase::h2d || span.duration_s() <= 0) continue;
    const double rate = double(span.bytes) / span.duration_s();
    const int first = std::clamp(int((span.start_s - begin_s) / bin_s), 0, bins - 1);
    const int last = std::clamp(int((span.end_s - begin_s) / bin_s), 0, bins - 1);
    for (int bin = first; bin <= last; ++bin) {
      const double overlap = std::min(span.end_s - begin_s, (bin + 1) * bin_s) - std::max(span.start_s - begin_s, bin * bin_s);
      if (overlap > 0) bytes[std::size_t(bin)] += rate * overlap;
    }
  }
  double peak_gbps = 1e-9;
  for (double b : bytes) peak_gbps = std::max(peak_gbps, b / bin_s / 1e9);
  const double x_scale = double(chart_width - label_width - 10) / bins;
  std::string points;
  for (int bin = 0; bin < bins; ++bin) {
    const double gbps = bytes[std::size_t(bin)] / bin_s / 1e9;
    points += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", label_width + bin * x_scale, 10 + plot_height * (1 - gbps / peak_gbps),
                          label_width + (bin + 1) * x_scale, 10 + plot_height * (1 - gbps / peak_gbps));
  }
  return fmt::format(
      R"(<svg class="chart" id="bandwidth" width="{0}" height="{1}" xmlns="http://www.w3.org/2000/svg">)"
      R"(<text x="2" y="16" font-size="11">{2:.1f} GB/s</text><text x="2" y="{3}" font-size="11">0 GB/s</text>)"
      R"(<line x1="{4}" y1="{3}" x2="{5}" y2="{3}" stroke="#999"/>)"
      R"(<polyline fill="none" stroke="#e15759" stroke-width="1.5" points="{6}"/>)"
      R"(<text x="{5}" y="{7}" font-size="11" text-anchor="end">{8:.3f} s</text></svg>)",
      chart_width, height, peak_gbps, 10 + plot_height, label_width, chart_width - 10, points, height - 4, makespan_s);
}

std::string heatmap_svg(const SweepTable& sweep) {
  const std::size_t threads_column = sweep.column("policy.synthesis_threads");
  const std::size_t slabs_column = sweep.column("policy.pool_slabs");
  const std::size_t utilization_column = sweep.column("gpu_utilization");
  std::set<long> threads, slabs;
  std::map<std::pair<long, long>, double> utilization;  // last row wins where other keys were swept too
  for (const auto& row : sweep.rows) {
    const long t = std::stol(row[threads_column]), s = std::stol(row[slabs_column]);
    threads.insert(t);
    slabs.insert(s);
    utilization[{t, s}] = std::stod(row[utilization_column]);
  }
  constexpr int cell = 44;
  const int width = label_width + std::max(int(threads.size()) * cell + 10, 420);  // room for the caption
  const int height = int(slabs.size()) * cell + 50;
  std::string svg = fmt::format(R"(<svg class="chart" id="heatmap" width="{}" height="{}" xmlns="http://www.w3.org/2000/svg">)",
                                width, height);
  int column = 0;
  for (long t : threads) {
    int row = 0;
    for (long s : slabs) {
      const auto found = utilization.find({t, s});
      const double u = found == utilization.end() ? 0 : found->second;
      const int red = int(255 * (1 - u)), green = int(200 * u);
      svg += fmt::format(R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="rgb({},{},80)"><title>threads {} slabs {}: {:.1f} %</title></rect>)svg"
                         R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{:.0f}</text>)",
                         label_width + column * cell, row * cell, cell - 2, cell - 2, red, green, t, s, 100 * u,
                         label_width + column * cell + cell / 2, row * cell + cell / 2 + 4, 100 * u);
      if (column == 0)
        svg += fmt::format(R"(<text x="2" y="{}" font-size="11">{} slabs</text>)", row * cell + cell / 2 + 4, s);
      ++row;
    }
    svg += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)",
                       label_width + column * cell + cell / 2, int(slabs.size()) * cell + 14, t);
    ++column;
  }
  svg += fmt::format(R"(<text x="{}" y="{}" font-size="11">synthesis threads; cells: predicted GPU utilization %</text></svg>)",
                     label_width, int(slabs.size()) * cell + 34);
  return svg;
}

}  // namespace

std::string phase_colour(std::size_t phase_index) {
  // Phases 5, 8 and 13 apart land 32, 20 and 12 degrees apart in hue: three lightness levels
  // (index mod 3) keep those pairs apart too.
  constexpr double golden_angle_degrees = 137.50776405003785, saturation = 0.6;
  const double lightness = 0.36 + 0.16 * double((phase_index + 1) % 3);
  const double hue = std::fmod(double(phase_index) * golden_angle_degrees, 360.0) / 60.0;  // in [0, 6)
  const double chroma = (1 - std::fabs(2 * lightness - 1)) * saturation;
  const double x = chroma * (1 - std::fabs(std::fmod(hue, 2.0) - 1)), m = lightness - chroma / 2;
  const int sector = int(hue);
  const double r = sector == 0 || sector == 5 ? chroma : sector == 1 || sector == 4 ? x : 0;
  const double g = sector == 1 || sector == 2 ? chroma : sector == 0 || sector == 3 ? x : 0;
  const double b = sector == 3 || sector == 4 ? chroma : sector == 2 || sector == 5 ? x : 0;
  auto byte = [m](double channel) { return int(std::lround((channel + m) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b));
}

std::string render_report(const std::string& title, const trace::Trace& spans, const std::optional<SweepTable>& sweep) {
  if (spans.empty()) throw std::runtime_error("the trace has no spans: nothing to report");
  const trace::TraceSummary summary = trace::summarize(spans);
  double begin_s = spans.front().start_s;
  for (const trace::Span& span : spans) begin_s = std::min(begin_s, span.start_s);
  std::string legend;
  for (trace::Phase phase : trace::all_phases)
    legend += fmt::format(R"(<span class="key"><i style="background:{}"></i>{}</span>)", phase_colour(std::size_t(phase)), trace::phase_name(phase));
  const std::string heatmap = sweep ? heatmap_svg(*sweep)
                                    : std::string("<p>No sweep table given: run <code>zkpipe sweep</code> over policy.synthesis_threads "
                                                  "and policy.pool_slabs and pass it with <code>--sweep</code>.</p>");
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<style>body{{font-family:sans-serif;margin:1.5em}} pre{{background:#f6f6f6;padding:.6em}}
.key{{margin-right:.8em;font-size:12px}} .key i{{display:inline-block;width:10px;height:10px;margin-right:3px}}</style></head>
<body><h1>{0}</h1>
<h2>Summary</h2><pre>{1}</pre>
<h2>Per-worker timeline</h2><div>{2}</div>{3}
<h2>Host-to-device bandwidth over time</h2>{4}
<h2>Predicted GPU utilization over synthesis threads x pool slabs</h2>{5}
<p id="render-check">not rendered</p>
<script>
const laidOut = [...document.querySelectorAll('svg.chart')].filter(c => c.getBBox().width > 0 && c.querySelectorAll('rect,polyline').length > 0);
document.getElementById('render-check').textContent = 'rendered charts: ' + laidOut.length;
</script>
</body></html>
)",
                     escape_html(title), escape_html(trace::format_summary(summary)), legend,
                     timeline_svg(spans, begin_s, summary.makespan_s), bandwidth_svg(spans, begin_s, summary.makespan_s),
                     heatmap);
}

}  // namespace zkpipe::model
