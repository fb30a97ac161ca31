// libFuzzer target: import_texts() (`zkpipe import cuzk`) on arbitrary bytes as one cuzk daemon
// log, then the import's summary. Any input must end in an imported trace or the import's
// std::runtime_error (no cuzk line, no span); a crash, hang, leak or out-of-bounds read is a bug.
#include <string_view>

#include "cuzk_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto result = zkpipe::model::cuzk::import_texts(
        {std::string_view(reinterpret_cast<const char*>(data), size)}, zkpipe::model::cuzk::ImportOptions{});
    zkpipe::model::cuzk::format_import_summary(result);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
