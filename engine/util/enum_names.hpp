// enum_names.hpp — an enum's names written once, as a table of (name, value) pairs, and what is
// read from it: a value's name, a name's value (nullopt for a name not in the table), and the
// names joined for help text and error messages ("pinned|pageable"). Header-only, no I/O, so the
// policy, the engine's settings, the model's scenarios and the command line share one table.
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace zk {

template <typename Enum>
struct EnumName {
  std::string_view name;
  Enum value;
};

template <typename Enum, std::size_t N>
using EnumNames = std::array<EnumName<Enum>, N>;

template <typename Enum, std::size_t N>
constexpr std::string_view name_of(const EnumNames<Enum, N>& names, Enum value) {
  for (const EnumName<Enum>& entry : names)
    if (entry.value == value) return entry.name;
  return "unknown";
}

template <typename Enum, std::size_t N>
constexpr std::optional<Enum> value_of(const EnumNames<Enum, N>& names, std::string_view name) {
  for (const EnumName<Enum>& entry : names)
    if (entry.name == name) return entry.value;
  return std::nullopt;
}

// The names in table order, each `quote`d, between `separator`s: "pinned|pageable".
template <typename Enum, std::size_t N>
std::string joined_names(const EnumNames<Enum, N>& names, std::string_view separator, std::string_view quote = "") {
  std::string text;
  for (const EnumName<Enum>& entry : names) {
    if (!text.empty()) text += separator;
    text.append(quote).append(entry.name).append(quote);
  }
  return text;
}

}  // namespace zk
