// whole_number_options.hpp — whole-number options read as a user means them. CLI11 2.1 converts
// with strtoull/strtoll in base 0, so "010" reads as 8 (octal), an unsigned option takes "-5" as
// 2^64 - 5, and a number past 64 bits as the largest there is. read_whole_numbers_as_decimal(app)
// puts a transform in front of every INT and UINT option of app and its subcommands (sizes such
// as 96GiB included): leading zeros are dropped ("010" is ten; "0x10" stays hexadecimal), and a
// sign on an unsigned option or a number past 64 bits is refused with a message naming the value.
#pragma once
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace zkpipe::tools {

namespace detail {

// The error for `input`, or "" after dropping the leading zeros of its digits.
inline std::string read_as_decimal(std::string& input, bool is_unsigned) {
  const std::size_t sign = !input.empty() && (input[0] == '-' || input[0] == '+') ? 1 : 0;
  if (is_unsigned && sign && input[0] == '-') return fmt::format("{} is negative: give a whole number >= 0", input);
  if (input.compare(sign, 2, "0x") == 0 || input.compare(sign, 2, "0X") == 0) return "";
  std::size_t digits_end = sign;
  while (digits_end < input.size() && input[digits_end] >= '0' && input[digits_end] <= '9') ++digits_end;
  std::size_t first = sign;
  while (first + 1 < digits_end && input[first] == '0') ++first;
  input.erase(sign, first - sign);
  digits_end -= first - sign;
  std::uint64_t magnitude = 0;
  const auto [end, error] = std::from_chars(input.data() + sign, input.data() + digits_end, magnitude);
  const std::uint64_t largest = is_unsigned ? std::numeric_limits<std::uint64_t>::max()
                                            : std::uint64_t(std::numeric_limits<std::int64_t>::max()) + (sign && input[0] == '-');
  if (error == std::errc::result_out_of_range || (error == std::errc() && magnitude > largest))
    return fmt::format("{} does not fit in 64 bits", input);
  return "";
}

}  // namespace detail

inline void read_whole_numbers_as_decimal(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    const bool is_unsigned = type.starts_with("UINT");
    if (!is_unsigned && !type.starts_with("INT")) continue;
    option->transform(CLI::Validator(
        [is_unsigned](std::string& input) { return detail::read_as_decimal(input, is_unsigned); }, ""));
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) read_whole_numbers_as_decimal(*command);
}

}  // namespace zkpipe::tools
