#include "models/md/domain.hpp"

#include <algorithm>
#include <cmath>

#include "engine/runtime/mpi_context.hpp"

namespace strata::md {

namespace {

// The most ranks to the longest axis.
std::array<int, 3> longest_first(const std::array<double, 3>& length) {
  std::array<int, 3> axes{0, 1, 2};
  std::stable_sort(axes.begin(), axes.end(), [&](int a, int b) { return length[a] > length[b]; });
  return axes;
}

}  // namespace

Domain::Domain(const MpiContext& mpi, const std::array<double, 3>& length)
    : Cartesian(mpi.comm(), 3, choose(mpi.size(), 3, longest_first(length)), {true, true, true}), length_(length) {}

double Domain::min_width() const {
  double w = length_[0] / ranks()[0];
  for (int a = 1; a < 3; ++a) w = std::min(w, length_[a] / ranks()[a]);
  return w;
}

int Domain::owner(const double* position) const {
  std::array<int, 3> c{};
  for (int a = 0; a < 3; ++a)
    c[a] = std::isfinite(position[a]) ? kernels::particles::axis_owner(position[a], length_[a], ranks()[a]) : 0;
  return rank_of(c);
}

}  // namespace strata::md
