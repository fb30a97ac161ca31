// json_number.hpp — a JSON number read into a C++ integer or double with the checks nlohmann's
// get<T>() leaves out, and a JSON string read as one of an enum's names (enum_names.hpp). An
// integral T takes only an integer T can hold: get<std::uint32_t>() would wrap 5000000000 and -1
// silently, and casting 1e67 to an integer is undefined behaviour. A double takes any number.
// What is refused throws std::invalid_argument naming `where` and the value, so a file's reader
// reports the field and what it held. Header-only.
#pragma once
#include <concepts>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/util/enum_names.hpp"

namespace zk {

template <typename T>
  requires(std::integral<T> && !std::same_as<T, bool>) || std::same_as<T, double>
T json_number(const nlohmann::json& value, std::string_view where) {
  if constexpr (std::same_as<T, double>) {
    if (value.is_number()) return value.get<double>();
    throw std::invalid_argument(fmt::format("{}: expected a number, found {}", where, value.dump()));
  } else {
    if (!value.is_number_integer())
      throw std::invalid_argument(fmt::format("{}: expected an integer, found {}", where, value.dump()));
    const bool fits = value.is_number_unsigned() ? std::in_range<T>(value.get<std::uint64_t>())
                                                 : std::in_range<T>(value.get<std::int64_t>());
    if (!fits)
      throw std::invalid_argument(fmt::format("{}: {} is outside {}..{}", where, value.dump(),
                                              std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
    return value.get<T>();
  }
}

// object[key] read as above, or fallback where object has no key; where names the field as
// "<section>.<key>".
template <typename T>
T json_number_or(const nlohmann::json& object, std::string_view section, const char* key, T fallback) {
  if (!object.contains(key)) return fallback;
  return json_number<T>(object.at(key), fmt::format("{}.{}", section, key));
}

// object[key], one of `names`, as its value, or fallback where object has no key; anything else
// throws std::invalid_argument naming "<section>.<key>", what it held and the names it takes.
template <typename Enum, std::size_t N>
Enum json_enum_or(const nlohmann::json& object, std::string_view section, const char* key, Enum fallback,
                  const EnumNames<Enum, N>& names) {
  if (!object.contains(key)) return fallback;
  const nlohmann::json& value = object.at(key);
  if (value.is_string())
    if (const auto chosen = value_of(names, value.get<std::string>())) return *chosen;
  throw std::invalid_argument(
      fmt::format("{}.{}: {}: expected one of {}", section, key, value.dump(), joined_names(names, ", ", "\"")));
}

}  // namespace zk
