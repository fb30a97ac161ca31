// Contract: renders one self-contained HTML page (inline SVG, no network, no external files):
// the trace summary, a per-resource timeline (GPU workers, PCIe, CPU threads) coloured by phase,
// host-to-device bandwidth over time (bytes of each h2d span spread over its duration, binned, as
// nvtop plots it), and, given a sweep table with policy.synthesis_threads and policy.pool_slabs
// columns, a heatmap of predicted GPU utilization. Every phase has its colour (phase_colour). A
// small inline script marks the page with the number of charts the browser laid out
// (#render-check), which the headless-browser test reads.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "sweep.hpp"
#include "trace/trace.hpp"

namespace zkpipe::model {

// The colour of the phase at this index of the schema's phases (trace::Phase): hues a golden
// angle (137.5 degrees) apart, at one of three lightness levels, so every phase the schema has or
// will add gets a colour, consecutive phases contrast, and the first 64 are all distinct.
std::string phase_colour(std::size_t phase_index);

std::string render_report(const std::string& title, const trace::Trace& spans, const std::optional<SweepTable>& sweep);

}  // namespace zkpipe::model
