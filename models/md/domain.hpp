// The spatial decomposition of md's periodic box: a 3-D Cartesian grid of
// ranks (engine/runtime/cartesian.hpp, as the grids; ranks keep their
// numbers), each owning the sub-box [lo, hi) of its grid coordinate.
// Bounds are L c / P for every rank alike, so ownership is decided by the
// same arithmetic on every rank.
#pragma once

#include <mpi.h>

#include <array>

#include "engine/runtime/cartesian.hpp"
#include "kernels/particles/rebuild.hpp"

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
  // The rank owning a position in [0, L)^3 (a non-finite coordinate: 0).
  int owner(const double* position) const;

 private:
  std::array<double, 3> length_;
};

// Periodic wrapping, shared with the rebuild kernels (kernels/particles/rebuild.hpp).
using kernels::particles::kMaxImages;
using kernels::particles::wrap_periodic;

}  // namespace strata::md
