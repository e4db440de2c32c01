// The spatial decomposition of md's periodic box: a 3-D Cartesian grid of
// ranks (engine/runtime/cartesian.hpp, as the grids; ranks keep their
// numbers), each owning the sub-box [lo, hi) of its grid coordinate.
// Bounds are L c / P for every rank alike, so ownership is decided by the
// same arithmetic on every rank.
#pragma once

#include <mpi.h>

#include <array>
#include <cmath>

#include "engine/runtime/cartesian.hpp"

namespace strata {
class MpiContext;
}

namespace strata::md {

class Domain : public Cartesian {
 public:
  Domain(const MpiContext& mpi, const std::array<double, 3>& length);

  const std::array<double, 3>& length() const { return length_; }
  double volume() const { return length_[0] * length_[1] * length_[2]; }
  double bound(int axis, int c) const { return length_[axis] * c / ranks()[axis]; }
  double lo(int axis) const { return bound(axis, coords()[axis]); }
  double hi(int axis) const { return bound(axis, coords()[axis] + 1); }
  double min_width() const;
  // The grid coordinate along `axis` whose [lo, hi) holds v (v in [0, L)).
  int coord_of(int axis, double v) const;
  // The rank owning a position in [0, L)^3.
  int owner(const double* position) const;

 private:
  std::array<double, 3> length_;
};

// Image counts beyond this are not a position but a blown-up atom: an atom
// this many box lengths out has lost 30 bits of its place in the box (and
// the count would overflow the int images are kept in).
inline constexpr double kMaxImages = 1073741824.0;   // 2^30

// Wraps v into [0, L) and adds the box lengths crossed to `image`. Returns
// false, leaving v and image as they were, when v is not finite or lies
// more than kMaxImages box lengths out: the caller reports the atom.
// A few box lengths are taken off one at a time, as a plain loop would (the
// same bits for every position a run produces); farther values take
// floor(v / L) lengths at once, so the work never grows with v.
inline bool wrap_periodic(double& v, double length, int& image) {
  if (!std::isfinite(v) || !(std::fabs(v) <= kMaxImages * length)) return false;
  double w = v;
  int crossed = 0;
  for (int k = 0; k < 4 && w < 0; ++k) {
    w += length;
    --crossed;
  }
  for (int k = 0; k < 4 && w >= length; ++k) {
    w -= length;
    ++crossed;
  }
  if (w < 0 || w >= length) {
    const double n = std::floor(w / length);
    w = std::fma(-n, length, w);
    crossed += static_cast<int>(n);
    // The rounding of w / L may leave w one length out either way.
    if (w < 0) {
      w += length;
      --crossed;
    }
    if (w >= length) {
      w -= length;
      ++crossed;
    }
  }
  v = w;
  image += crossed;
  return true;
}

}  // namespace strata::md
