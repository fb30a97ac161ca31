#include "report.hpp"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "engine/util/text_file.hpp"

namespace zkpipe::model {

extern const char report_page_script[];  // report_page.js (report_page_script.cpp, generated)

namespace {

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

// Text inside a <script> element ends at the first "</script" (any case). Written "<\/script" it
// means the same in a JSON or JavaScript string, regular expression or comment, where alone it can stand.
std::string inside_script(std::string text) {
  for (std::size_t at = 0; (at = text.find("</", at)) != std::string::npos; at += 2) {
    std::string next = text.substr(at + 2, 6);
    for (char& c : next) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (next == "script") text.replace(at, 2, "<\\/");
  }
  return text;
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

std::filesystem::path default_chart_library_path() { return ZKPIPE_CHART_LIBRARY; }

std::string read_chart_library(const std::filesystem::path& path) {
  std::string text = zk::read_text_file(path).value_or("");
  if (text.empty())
    throw std::runtime_error(fmt::format("the charting library {} is missing: run tools/install-deps.sh (npm install in "
                                         "tools/report), or give its echarts.min.js with --chart-library FILE",
                                         path.string()));
  return text;
}

std::string read_validation_file(const std::filesystem::path& path) {
  std::optional<std::string> text = zk::read_text_file(path);
  if (!text || text->empty())
    throw std::runtime_error(fmt::format("{}: {}: give the validation.md that zkpipe validate writes", path.string(),
                                         text ? "empty" : "cannot be read"));
  return std::move(*text);
}

std::string render_report(const ReportInputs& inputs, const std::string& chart_library_script) {
  const std::string data = inside_script(report_data(inputs).dump());
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<style>
body{{font-family:sans-serif;margin:1.2em;color:#222}} h1{{font-size:1.5em}} h2{{font-size:1.15em;margin-top:1.4em}}
pre{{background:#f6f6f6;padding:.5em;font-size:12px;margin:0}} .runs{{display:flex;gap:1em;flex-wrap:wrap}} .runs>div{{flex:1;min-width:28em}}
.chart{{width:100%;height:320px}} table{{border-collapse:collapse;font-size:12px}} td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}
th:first-child,td:first-child{{text-align:left}} .note{{color:#555;font-size:12px}}
</style></head>
<body><h1>{0}</h1><main id="report"></main>
<script type="application/json" id="report-data">{1}</script>
<script>{2}</script>
<script>{3}</script>
</body></html>
)",
                     escape_html(inputs.title), data, inside_script(chart_library_script), inside_script(report_page_script));
}

}  // namespace zkpipe::model
