#include "models/md/domain.hpp"

#include <algorithm>
#include <cmath>

#include "engine/runtime/mpi_context.hpp"

namespace strata::md {

Domain::Domain(const MpiContext& mpi, const std::array<double, 3>& length) : length_(length) {
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(mpi.size(), 3, dims);
  // MPI_Dims_create orders the counts non-increasing; give the most ranks to
  // the longest axis.
  std::array<int, 3> axes{0, 1, 2};
  std::stable_sort(axes.begin(), axes.end(), [&](int a, int b) { return length_[a] > length_[b]; });
  for (int k = 0; k < 3; ++k) procs_[axes[k]] = dims[k];
  int periods[3] = {1, 1, 1};
  MPI_Cart_create(mpi.comm(), 3, procs_.data(), periods, 0, &cart_);
  MPI_Comm_rank(cart_, &rank_);
  MPI_Cart_coords(cart_, rank_, 3, coord_.data());
  for (int a = 0; a < 3; ++a) MPI_Cart_shift(cart_, a, 1, &lower_[a], &upper_[a]);
}

Domain::~Domain() {
  if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
}

double Domain::min_width() const {
  double w = length_[0] / procs_[0];
  for (int a = 1; a < 3; ++a) w = std::min(w, length_[a] / procs_[a]);
  return w;
}

int Domain::coord_of(int axis, double v) const {
  if (!std::isfinite(v)) return 0;   // no owner; callers check finiteness where it matters
  int c = static_cast<int>(std::floor(v / length_[axis] * procs_[axis]));
  c = std::clamp(c, 0, procs_[axis] - 1);
  // The floor may be one off the bounds' own arithmetic: settle on them.
  while (c > 0 && v < bound(axis, c)) --c;
  while (c + 1 < procs_[axis] && v >= bound(axis, c + 1)) ++c;
  return c;
}

int Domain::owner(const double* position) const {
  int c[3];
  for (int a = 0; a < 3; ++a) c[a] = coord_of(a, position[a]);
  int r = 0;
  MPI_Cart_rank(cart_, c, &r);
  return r;
}

}  // namespace strata::md
