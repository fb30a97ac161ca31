// number_text.hpp — a number read from text that is that number and nothing else (no sign where
// the type has none, no spaces, no trailing characters), for readers that name the bad field in
// their own words.
#pragma once
#include <charconv>
#include <optional>
#include <string_view>

namespace zk {

// `text` as a Number; std::nullopt where it is empty, out of range or not all number.
template <class Number>
std::optional<Number> number_from_text(std::string_view text) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;  // empty: invalid_argument
  return value;
}

}  // namespace zk
