#include "engine/util/decimal.hpp"

#include <algorithm>
#include <vector>

namespace zk {

std::string limbs_to_decimal(std::span<const uint64_t> limbs) {
  std::vector<uint64_t> n(limbs.begin(), limbs.end());
  std::string digits;
  constexpr uint64_t chunk = 10'000'000'000'000'000'000ull;  // 10^19
  auto nonzero = [&] { return std::any_of(n.begin(), n.end(), [](uint64_t v) { return v; }); };
  while (nonzero()) {
    unsigned __int128 rem = 0;
    for (size_t i = n.size(); i-- > 0;) {
      unsigned __int128 cur = (rem << 64) | n[i];
      n[i] = static_cast<uint64_t>(cur / chunk);
      rem = cur % chunk;
    }
    auto r = static_cast<uint64_t>(rem);
    for (int k = 0; k < 19; ++k) {
      digits.push_back(static_cast<char>('0' + r % 10));
      r /= 10;
    }
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (digits.empty()) digits.assign(1, '0');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

bool decimal_to_limbs(std::string_view text, std::span<uint64_t> limbs) {
  std::fill(limbs.begin(), limbs.end(), 0);
  if (text.empty() || text.size() > 200) return false;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return false;
    uint64_t carry = static_cast<uint64_t>(ch - '0');
    for (auto& limb : limbs) {
      unsigned __int128 cur = static_cast<unsigned __int128>(limb) * 10 + carry;
      limb = static_cast<uint64_t>(cur);
      carry = static_cast<uint64_t>(cur >> 64);
    }
    if (carry) return false;
  }
  return true;
}

}  // namespace zk
