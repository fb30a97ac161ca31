// affine.hpp — a short-Weierstrass point y^2 = x^3 + b in affine coordinates (a = 0).
// The point at infinity is encoded as x = y = 0, which no curve point has since b != 0; this is
// also snarkjs's encoding in .zkey files. Curve supplies `using field` and `b()`.
#pragma once
#include "kernels/util/host_device.hpp"

namespace zk::ec {

template <class Curve>
struct affine_t {
  using field = typename Curve::field;
  field x, y;

  static ZK_HD affine_t infinity() { return {field::zero(), field::zero()}; }
  ZK_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
  ZK_HD bool is_on_curve() const { return is_infinity() || y.sqr() == x.sqr() * x + Curve::b(); }
  ZK_HD affine_t operator-() const { return is_infinity() ? *this : affine_t{x, -y}; }
  friend ZK_HD bool operator==(const affine_t& a, const affine_t& b) { return a.x == b.x && a.y == b.y; }
  friend ZK_HD bool operator!=(const affine_t& a, const affine_t& b) { return !(a == b); }
};

}  // namespace zk::ec
