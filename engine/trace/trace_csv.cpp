#include "trace_csv.hpp"

#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <libfccp/csv.h>

#include "engine/util/atomic_file.hpp"
#include "engine/util/number_text.hpp"
#include "engine/util/text_file.hpp"

namespace zkpipe::trace {

namespace {

std::string optional_number(const std::optional<std::uint32_t>& number) {
  return number ? std::to_string(*number) : std::string();
}

}  // namespace

void write_csv(std::ostream& out, std::span<const Span> spans) {
  out << csv_header << '\n';
  for (const Span& span : spans)
    out << fmt::format("{},{},{},{},{},{:.9f},{:.9f},{},{},{},{}\n", span.run, source_name(span.source),
                       span.partition, phase_name(span.phase), span.resource, span.start_s, span.end_s, span.bytes,
                       span.items, optional_number(span.attempt), optional_number(span.worker));
}

std::string to_csv(std::span<const Span> spans) {
  std::ostringstream out;
  write_csv(out, spans);
  return out.str();
}

void write_csv_file(const std::filesystem::path& path, std::span<const Span> spans) {
  zk::write_file_atomically(path, [spans](std::ostream& out) { write_csv(out, spans); });
}

namespace {

using Reader = io::CSVReader<11, io::trim_chars<' ', '\t'>, io::no_quote_escape<','>,
                             io::throw_on_overflow, io::single_line_comment<'#'>>;

template <typename Number>
Number parse_number(std::string_view origin, unsigned line, std::string_view column,
                    const std::string& text) {
  const std::optional<Number> value = zk::number_from_text<Number>(text);
  if (!value) throw TraceError(fmt::format("{}:{}: column {}: '{}' is not a number", origin, line, column, text));
  return *value;
}

Trace read_rows(std::string_view origin, Reader& reader) {
  Trace spans;
  try {
    // attempt and worker came with version 2; every other column is required.
    reader.read_header(io::ignore_missing_column, "run", "source", "partition", "phase", "resource",
                       "start_s", "end_s", "bytes", "items", "attempt", "worker");
    for (const char* column : {"run", "source", "partition", "phase", "resource", "start_s", "end_s", "bytes", "items"})
      if (!reader.has_column(column))
        throw TraceError(fmt::format("{}: not a zkpipe trace (no column {}); expected the header {}", origin, column,
                                     csv_header));
    std::string run, source, partition, phase, resource, start_s, end_s, bytes, items, attempt, worker;
    while (reader.read_row(run, source, partition, phase, resource, start_s, end_s, bytes, items, attempt, worker)) {
      const unsigned line = reader.get_file_line();
      Span span;
      span.run = run;
      const auto parsed_source = parse_source(source);
      if (!parsed_source)
        throw TraceError(fmt::format("{}:{}: column source: '{}' is neither measured nor simulated",
                                     origin, line, source));
      span.source = *parsed_source;
      span.partition = parse_number<std::uint32_t>(origin, line, "partition", partition);
      const auto parsed_phase = parse_phase(phase);
      if (!parsed_phase)
        throw TraceError(fmt::format("{}:{}: column phase: unknown phase '{}'", origin, line, phase));
      span.phase = *parsed_phase;
      span.resource = resource;
      span.start_s = parse_number<double>(origin, line, "start_s", start_s);
      span.end_s = parse_number<double>(origin, line, "end_s", end_s);
      if (span.end_s < span.start_s)
        throw TraceError(fmt::format("{}:{}: column end_s: span ends before it starts", origin, line));
      span.bytes = parse_number<std::uint64_t>(origin, line, "bytes", bytes);
      span.items = parse_number<std::uint64_t>(origin, line, "items", items);
      if (!attempt.empty()) span.attempt = parse_number<std::uint32_t>(origin, line, "attempt", attempt);
      if (!worker.empty()) span.worker = parse_number<std::uint32_t>(origin, line, "worker", worker);
      spans.push_back(std::move(span));
    }
  } catch (const io::error::base& error) {
    throw TraceError(fmt::format("{}: not a zkpipe trace ({}); expected the header {}", origin,
                                 error.what(), csv_header));
  }
  return spans;
}

}  // namespace

Trace read_csv_file(const std::filesystem::path& path) {
  const auto text = zk::read_text_file(path);
  if (!text) throw TraceError(fmt::format("cannot open trace {}: check the path", path.string()));
  return read_csv_text(path.string(), *text);
}

Trace read_csv_text(std::string_view origin, std::string_view text) {
  const std::string name(origin);
  Reader reader(name, text.data(), text.data() + text.size());
  return read_rows(origin, reader);
}

}  // namespace zkpipe::trace
