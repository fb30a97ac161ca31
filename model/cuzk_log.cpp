#include "cuzk_log.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "engine/util/number_text.hpp"

namespace zkpipe::model::cuzk {

namespace {

constexpr std::string_view timeline_prefix = "TIMELINE,";
constexpr std::string_view cuzk_timing_prefix = "CUZK_TIMING: ";
constexpr std::string_view ntt_h_prefix = "CUZK_NTT_H: ";
constexpr char escape = '\x1b';

// Messages of tracing lines whose fields the import reads; other GPU_TIMING and FIN_TIMING
// messages are recorded by their prefix alone.
constexpr std::array<std::string_view, 4> read_messages = {
    "GPU_TIMING spawn_blocking prove_start", "pipeline GPU worker started", "cached synthesis capacity hint",
    "attempting pinned memory synthesis"};
constexpr std::array<std::string_view, 2> informational_prefixes = {"GPU_TIMING", "FIN_TIMING"};

bool digit_at(std::string_view text, std::size_t i) { return std::isdigit(static_cast<unsigned char>(text[i])) != 0; }

// tracing's timestamp, 2026-12-01T10:00:00.123456Z, begins at `at`.
bool timestamp_at(std::string_view text, std::size_t at) {
  if (text.size() < at + 19) return false;
  constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd";
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 'd' ? !digit_at(text, at + i) : text[at + i] != shape[i]) return false;
  return true;
}

bool starts_record(std::string_view line) {
  return line.starts_with(timeline_prefix) || line.starts_with(cuzk_timing_prefix) || line.starts_with(ntt_h_prefix) ||
         line.starts_with(escape) || timestamp_at(line, 0);
}

// Where another line's start lies inside `line` after its first character (npos: nowhere).
std::size_t embedded_start(std::string_view line) {
  std::size_t found = std::string_view::npos;
  for (std::string_view marker : {cuzk_timing_prefix, ntt_h_prefix, std::string_view(&escape, 1)})
    found = std::min(found, line.find(marker, 1));
  for (std::size_t i = 1; i + 19 <= line.size() && i < found; ++i)
    if (timestamp_at(line, i)) return i;
  return found;
}

// "a b c" -> {"a", "b", "c"}; runs of the separator give no empty pieces.
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  while (!text.empty()) {
    const std::size_t end = text.find(separator);
    if (end != 0) pieces.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return pieces;
}

std::optional<std::pair<std::string_view, std::string_view>> key_value(std::string_view token) {
  const std::size_t equals = token.find('=');
  if (equals == 0 || equals == std::string_view::npos) return std::nullopt;
  return std::pair{token.substr(0, equals), token.substr(equals + 1)};
}

}  // namespace

std::optional<std::int64_t> parse_integer(std::string_view text) { return zk::number_from_text<std::int64_t>(text); }

std::string without_ansi_escapes(std::string_view line) {
  std::string clean;
  clean.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != escape || i + 1 >= line.size() || line[i + 1] != '[') {
      clean += line[i];
      continue;
    }
    std::size_t end = i + 2;  // a CSI sequence: ESC [ parameters final-letter
    while (end < line.size() && (digit_at(line, end) || line[end] == ';')) ++end;
    i = end < line.size() ? end : line.size() - 1;
  }
  return clean;
}

std::optional<TimelineRecord> parse_timeline(std::string_view line) {
  if (!line.starts_with(timeline_prefix)) return std::nullopt;
  std::array<std::string_view, 3> fields;  // offset, event, job id; the detail is the rest
  std::string_view rest = line.substr(timeline_prefix.size());
  for (std::string_view& field : fields) {
    const std::size_t comma = rest.find(',');
    if (comma == 0 || comma == std::string_view::npos) return std::nullopt;
    field = rest.substr(0, comma);
    rest.remove_prefix(comma + 1);
  }
  const auto offset_ms = parse_integer(fields[0]);
  if (!offset_ms || *offset_ms < 0 || rest.empty()) return std::nullopt;
  if (!std::ranges::all_of(fields[1], [](char c) { return std::isupper(static_cast<unsigned char>(c)) || c == '_'; }))
    return std::nullopt;
  TimelineRecord record{double(*offset_ms), std::string(fields[1]), std::string(fields[2]), {}};
  if (rest == "monolithic") {
    record.detail.emplace("monolithic", "");
    return record;
  }
  for (std::string_view pair : split(rest, ',')) {
    const auto kv = key_value(pair);
    if (!kv) return std::nullopt;
    record.detail.emplace(kv->first, kv->second);
  }
  return record;
}

std::optional<KernelTimingRecord> parse_kernel_timing(std::string_view line) {
  KernelTimingRecord record;
  record.ntt_h = line.starts_with(ntt_h_prefix);
  if (!record.ntt_h && !line.starts_with(cuzk_timing_prefix)) return std::nullopt;
  const std::string_view rest = line.substr(record.ntt_h ? ntt_h_prefix.size() : cuzk_timing_prefix.size());
  if (rest.find('=') == std::string_view::npos) {
    if (record.ntt_h || rest.empty()) return std::nullopt;
    record.text = rest;
    return record;
  }
  for (std::string_view token : split(rest, ' ')) {
    const auto kv = key_value(token);
    if (!kv) return std::nullopt;
    std::string_view number = kv->second;
    if (number.ends_with("ms")) number.remove_suffix(2);
    const auto value = parse_integer(number);
    if (!value) return std::nullopt;
    record.values.emplace(kv->first, *value);
  }
  return record;
}

std::optional<TracingRecord> parse_tracing(std::string_view line) {
  if (!timestamp_at(line, 0)) return std::nullopt;
  TracingRecord record;
  std::size_t fields_at = std::string_view::npos;
  for (std::string_view message : read_messages) {
    const std::size_t at = line.find(std::string(": ").append(message));
    if (at == std::string_view::npos) continue;
    const std::size_t end = at + 2 + message.size();
    if (end == line.size() || line[end] == ' ') {
      record.message = message;
      fields_at = end;
      break;
    }
  }
  if (record.message.empty()) {
    for (std::string_view prefix : informational_prefixes)
      if (line.find(std::string(": ").append(prefix).append(" ")) != std::string_view::npos) {
        record.message = prefix;
        return record;
      }
    return std::nullopt;
  }
  for (std::string_view token : split(line.substr(fields_at), ' '))
    if (const auto kv = key_value(token)) record.fields.emplace(kv->first, kv->second);
  return record;
}

void LogReader::consume(const std::optional<Record>& record) {
  if (!record) {
    ++counts_.malformed;
    return;
  }
  switch (consumer_(*record)) {
    case Disposition::used: ++counts_.used; break;
    case Disposition::informational: ++counts_.informational; break;
    case Disposition::unattributed: ++counts_.unattributed; break;
    case Disposition::malformed: ++counts_.malformed; break;
  }
}

void LogReader::read_line(std::string_view line, bool terminated) {
  ++counts_.read;
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (!terminated) {  // the writer was cut off: the line's numbers may be cut short
    ++counts_.partial;
    end_of_file();
    return;
  }
  if (torn_head_ && continue_torn_line(line)) return;
  read_whole_line(line);
}

void LogReader::end_of_file() {
  if (torn_head_) ++counts_.torn_dropped;
  torn_head_.reset();
}

bool LogReader::continue_torn_line(std::string_view line) {
  if (starts_record(line)) {  // a whole line written between the head's pieces
    if (line.starts_with(timeline_prefix)) end_of_file();  // a new TIMELINE line: the head's rest never came
    return false;
  }
  if (const std::size_t embedded = embedded_start(line); embedded != std::string_view::npos) {
    torn_head_->append(line.substr(0, embedded));
    read_whole_line(line.substr(embedded));
    return true;
  }
  const std::optional<TimelineRecord> rejoined = parse_timeline(*torn_head_ + std::string(line));
  torn_head_.reset();
  if (!rejoined) {
    counts_.torn_dropped += 2;  // the head and this fragment
    return true;
  }
  ++counts_.torn_rejoined;
  consume(*rejoined);
  return true;
}

void LogReader::read_timeline_line(std::string_view line) {
  if (const std::size_t embedded = embedded_start(line); embedded != std::string_view::npos) {
    torn_head_ = std::string(line.substr(0, embedded));
    read_whole_line(line.substr(embedded));
    return;
  }
  const std::optional<TimelineRecord> record = parse_timeline(line);
  consume(record ? std::optional<Record>(*record) : std::nullopt);
}

void LogReader::read_whole_line(std::string_view line) {
  if (line.starts_with(timeline_prefix)) return read_timeline_line(line);
  if (line.starts_with(cuzk_timing_prefix) || line.starts_with(ntt_h_prefix)) {
    const std::optional<KernelTimingRecord> record = parse_kernel_timing(line);
    return consume(record ? std::optional<Record>(*record) : std::nullopt);
  }
  const std::optional<TracingRecord> record = parse_tracing(without_ansi_escapes(line));
  if (record) return consume(*record);
  ++counts_.other;
}

}  // namespace zkpipe::model::cuzk
