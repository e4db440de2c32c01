// The spatial decomposition of md's periodic box: a 3-D Cartesian grid of
// ranks (MPI_Dims_create, MPI_Cart_create without reordering, so ranks keep
// their numbers), each owning the sub-box [lo, hi) of its grid coordinate.
// Bounds are L c / P for every rank alike, so ownership is decided by the
// same arithmetic on every rank.
#pragma once

#include <mpi.h>

#include <array>

namespace strata {
class MpiContext;
}

namespace strata::md {

class Domain {
 public:
  Domain(const MpiContext& mpi, const std::array<double, 3>& length);
  ~Domain();
  Domain(const Domain&) = delete;
  Domain& operator=(const Domain&) = delete;

  const std::array<double, 3>& length() const { return length_; }
  double volume() const { return length_[0] * length_[1] * length_[2]; }
  const std::array<int, 3>& procs() const { return procs_; }
  const std::array<int, 3>& coord() const { return coord_; }
  double bound(int axis, int c) const { return length_[axis] * c / procs_[axis]; }
  double lo(int axis) const { return bound(axis, coord_[axis]); }
  double hi(int axis) const { return bound(axis, coord_[axis] + 1); }
  double min_width() const;
  // The rank below and above along an axis (periodic; may be this rank).
  int lower(int axis) const { return lower_[axis]; }
  int upper(int axis) const { return upper_[axis]; }
  // The grid coordinate along `axis` whose [lo, hi) holds v (v in [0, L)).
  int coord_of(int axis, double v) const;
  // The rank owning a position in [0, L)^3.
  int owner(const double* position) const;
  MPI_Comm comm() const { return cart_; }
  int rank() const { return rank_; }

 private:
  std::array<double, 3> length_;
  std::array<int, 3> procs_{0, 0, 0}, coord_{0, 0, 0}, lower_{0, 0, 0}, upper_{0, 0, 0};
  MPI_Comm cart_ = MPI_COMM_NULL;
  int rank_ = 0;
};

// Wraps v into [0, L); returns the number of box lengths added (image shift).
inline int wrap_periodic(double& v, double length) {
  int image = 0;
  while (v < 0) {
    v += length;
    --image;
  }
  while (v >= length) {
    v -= length;
    ++image;
  }
  return image;
}

}  // namespace strata::md
