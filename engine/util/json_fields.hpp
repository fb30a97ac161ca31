// json_fields.hpp — a struct written to and read from a JSON object through one list of its
// fields: a function `fields(s, visit)` calls visit("key", s.key) for each field, or
// visit("key", s.key, names) for an enum stored as one of its names (enum_names.hpp).
// JsonFieldWriter writes every field under its key (an empty std::optional writes nothing).
// JsonFieldReader reads every field whose key is present; where a key is absent, an optional
// field stays empty and another keeps its value (its default) or, `required`, is an error.
// Numbers are read with the checks nlohmann's get<T>() leaves out: an integral field takes only
// an integer it can hold (get<std::uint32_t>() would wrap 5000000000 and -1 silently, and casting
// 1e67 to an integer is undefined behaviour); a double takes any number. What is refused throws
// std::invalid_argument naming "<section>.<key>" and what it held. Header-only.
#pragma once
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/util/enum_names.hpp"

namespace zk {

template <typename T>
concept JsonNumber = (std::integral<T> && !std::same_as<T, bool>) || std::same_as<T, double>;

template <JsonNumber T>
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

// `value` as one of `names`; anything else throws std::invalid_argument naming what it held and the
// names it takes.
template <typename Enum, std::size_t N>
Enum json_enum(const nlohmann::json& value, const EnumNames<Enum, N>& names) {
  if (value.is_string())
    if (const auto chosen = value_of(names, value.get<std::string>())) return *chosen;
  throw std::invalid_argument(fmt::format("{}: expected one of {}", value.dump(), joined_names(names, ", ", "\"")));
}

struct JsonFieldWriter {
  nlohmann::json& json;
  template <typename T>
  void operator()(const char* key, const T& field) const {
    json[key] = field;
  }
  template <typename T>
  void operator()(const char* key, const std::optional<T>& field) const {
    if (field) (*this)(key, *field);
  }
  template <typename Enum, std::size_t N>
  void operator()(const char* key, const Enum& field, const EnumNames<Enum, N>& names) const {
    json[key] = name_of(names, field);
  }
  template <typename Enum, std::size_t N>
  void operator()(const char* key, const std::optional<Enum>& field, const EnumNames<Enum, N>& names) const {
    if (field) (*this)(key, *field, names);
  }
};

struct JsonFieldReader {
  const nlohmann::json& json;
  std::string_view section;
  bool required = false;  // a non-optional field's key absent: an error, else the field keeps its value

  template <typename T>
  void operator()(const char* key, std::optional<T>& field) const {
    if (json.contains(key)) field = get<T>(key);
  }
  template <typename T>
  void operator()(const char* key, T& field) const {
    if (present(key)) field = get<T>(key);
  }
  template <typename Enum, std::size_t N>
  void operator()(const char* key, std::optional<Enum>& field, const EnumNames<Enum, N>& names) const {
    if (json.contains(key)) field = choice(key, names);
  }
  template <typename Enum, std::size_t N>
  void operator()(const char* key, Enum& field, const EnumNames<Enum, N>& names) const {
    if (present(key)) field = choice(key, names);
  }

 private:
  bool present(const char* key) const {
    if (json.contains(key)) return true;
    if (required) throw std::invalid_argument(fmt::format("no {}.{}: it is required", section, key));
    return false;
  }
  template <typename T>
  T get(const char* key) const {
    const std::string where = fmt::format("{}.{}", section, key);
    try {
      if constexpr (JsonNumber<T>) return json_number<T>(json.at(key), where);
      else return json.at(key).get<T>();
    } catch (const nlohmann::json::exception& error) {
      throw std::invalid_argument(fmt::format("{}: {}", where, error.what()));
    } catch (const std::invalid_argument& error) {  // json_number's, naming `where`, or a nested from_json's
      const std::string what = error.what();
      throw std::invalid_argument(what.find(where) != std::string::npos ? what : fmt::format("{}: {}", where, what));
    }
  }
  template <typename Enum, std::size_t N>
  Enum choice(const char* key, const EnumNames<Enum, N>& names) const {
    try {
      return json_enum(json.at(key), names);
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(fmt::format("{}.{}: {}", section, key, error.what()));
    }
  }
};

}  // namespace zk
