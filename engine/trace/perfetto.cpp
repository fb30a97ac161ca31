#include "perfetto.hpp"

#include <map>

#include "engine/util/atomic_file.hpp"
#include "trace_csv.hpp"

namespace zkpipe::trace {

nlohmann::json to_chrome_trace(std::span<const Span> spans) {
  std::map<std::string, int> process_ids;                   // "gpu0" -> pid
  std::map<std::string, std::pair<int, int>> thread_ids;    // "gpu0:w1" -> (pid, tid)
  nlohmann::json events = nlohmann::json::array();
  for (const Span& span : spans) {
    const std::string device = span.resource.substr(0, span.resource.find(':'));
    auto [process, new_process] = process_ids.try_emplace(device, int(process_ids.size()) + 1);
    if (new_process)
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", process->second},
                        {"args", {{"name", device}}}});
    auto [thread, new_thread] =
        thread_ids.try_emplace(span.resource, process->second, int(thread_ids.size()) + 1);
    if (new_thread)
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", thread->second.first},
                        {"tid", thread->second.second}, {"args", {{"name", span.resource}}}});
    events.push_back({{"ph", "X"},
                      {"name", phase_name(span.phase)},
                      {"cat", source_name(span.source)},
                      {"pid", thread->second.first},
                      {"tid", thread->second.second},
                      {"ts", span.start_s * 1e6},
                      {"dur", span.duration_s() * 1e6},
                      {"args", {{"run", span.run}, {"partition", span.partition},
                                {"bytes", span.bytes}, {"items", span.items}}}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const std::filesystem::path& path, std::span<const Span> spans) {
  zk::write_text_atomically(path, to_chrome_trace(spans).dump() + '\n');
}

}  // namespace zkpipe::trace
