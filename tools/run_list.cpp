#include "tools/run_list.hpp"

#include <optional>
#include <set>

#include <libfccp/csv.h>

#include "engine/util/error.hpp"
#include "engine/util/number_text.hpp"
#include "engine/util/text_file.hpp"

namespace zkpipe::tools {
namespace {

using Reader = io::CSVReader<3, io::trim_chars<' ', '\t'>, io::no_quote_escape<','>, io::throw_on_overflow,
                             io::single_and_empty_line_comment<'#'>>;

std::uint32_t whole_number(const std::string& origin, unsigned line, const char* column, const std::string& text) {
  const std::optional<std::uint32_t> value = zk::number_from_text<std::uint32_t>(text);
  if (!value) zk::fail("{}:{}: column {}: '{}' is not a whole number", origin, line, column, text);
  return *value;
}

void check_name(const std::string& origin, unsigned line, const std::string& name, std::set<std::string>& names) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    zk::fail("{}:{}: run '{}' cannot name a folder under --trace-dir; give a name without '/'", origin, line, name);
  if (!names.insert(name).second)
    zk::fail("{}:{}: run '{}' is listed twice; each run's trace goes to a folder of its name", origin, line, name);
}

}  // namespace

std::vector<ListedRun> read_run_list(const std::filesystem::path& path) {
  const std::string origin = path.string();
  const auto text = zk::read_text_file(path);
  if (!text) zk::fail("cannot read the run list {}: check the path", origin);
  std::vector<ListedRun> runs;
  std::set<std::string> names;
  try {
    Reader reader(origin, text->data(), text->data() + text->size());
    reader.read_header(io::ignore_no_column, "run", "synthesis_threads", "pool_slabs");
    std::string name, threads, slabs;
    while (reader.read_row(name, threads, slabs)) {
      const unsigned line = reader.get_file_line();
      check_name(origin, line, name, names);
      runs.push_back({name, whole_number(origin, line, "synthesis_threads", threads),
                      whole_number(origin, line, "pool_slabs", slabs)});
    }
  } catch (const io::error::base& error) {
    zk::fail("{}: not a run list ({}); expected CSV with the header run,synthesis_threads,pool_slabs", origin,
             error.what());
  }
  if (runs.empty()) zk::fail("{}: no runs listed; give a row a run under the header run,synthesis_threads,pool_slabs", origin);
  return runs;
}

}  // namespace zkpipe::tools
