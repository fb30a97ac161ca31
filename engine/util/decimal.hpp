// decimal.hpp — base-10 text of multi-limb unsigned integers and of field elements, as snarkjs's
// JSON writes them. Parsing rejects anything that is not a plain non-negative decimal number
// below the field's modulus, with a message naming the value and where it came from.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/util/error.hpp"

namespace zk {

// Little-endian limbs -> decimal digits.
std::string limbs_to_decimal(std::span<const uint64_t> limbs);
// Decimal digits -> little-endian limbs; false when not a number or it does not fit.
bool decimal_to_limbs(std::string_view text, std::span<uint64_t> limbs);

template <class F>
std::string to_decimal(const F& x) {
  uint64_t c[F::N];
  x.to_canonical(c);
  return limbs_to_decimal(c);
}

// Parses a canonical field element; `where` names the input for the error message.
template <class F>
F from_decimal(std::string_view text, std::string_view where) {
  uint64_t c[F::N];
  if (!decimal_to_limbs(text, c) || !F::is_below_modulus(c))
    fail("{}: '{}' is not a field element (a decimal number below the field's modulus)", where,
         text.substr(0, 100));
  return F::from_canonical(c);
}

}  // namespace zk
