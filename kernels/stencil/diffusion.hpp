// The 3-D heat equation du/dt = kappa laplacian(u), explicit Euler in time
// and the 7-point second-order Laplacian in space, and the analytic
// spreading Gaussian it is validated against.
#pragma once

#include <cmath>

#include "kernels/grid/field_view.hpp"

namespace strata::kernels::stencil {

using grid::FieldView;
using grid::index_t;

// out = u + dt kappa (d2u/dx2 + d2u/dy2 + d2u/dz2); cx = kappa dt / dx^2, ...
// written as w u + cx (u(i-1) + u(i+1)) + cy (...) + cz (...) with the
// centre's weight w = 1 - 2 (cx + cy + cz) computed once on the host:
// 7 FP slots a cell instead of the second differences' 10, and every
// product's weight is nonnegative under the stability limit (w >= 0), so
// no partial sum exceeds max|u|.
template <class T>
struct HeatStep {
  FieldView<const T> u;
  FieldView<T> out;
  T cx, cy, cz;
  T w;  // the centre's weight, centre_weight(cx, cy, cz): made by heat_step()

  // The T nearest 1 - 2 (cx + cy + cz), the sum taken in long double
  // (exact for floats, and for doubles whose exponents are within 9 of
  // each other, as a grid's cell sizes make them), so w + 2 (cx + cy + cz)
  // is 1 and the update conserves the sum of u whenever that weight is a
  // T, as at cubic cells with dt 0.9 of the stability limit.
  static T centre_weight(T cx, T cy, T cz) {
    const long double s = static_cast<long double>(cx) + static_cast<long double>(cy) + static_cast<long double>(cz);
    return static_cast<T>(1.0L - 2.0L * s);
  }

  // u once (its neighbours come from cache) and out; 7 FP instruction
  // slots (w c, three neighbour sums and three FMAs: nvcc 13's PTX for
  // sm_90, both precisions).
  static constexpr Work cell_work() { return item_work<T>(2, 7); }
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
    const T c = u(i, j, k);
    out(i, j, k) = w * c + cx * (u(i - 1, j, k) + u(i + 1, j, k)) + cy * (u(i, j - 1, k) + u(i, j + 1, k)) +
                   cz * (u(i, j, k - 1) + u(i, j, k + 1));
  }
};

// The heat step from u to out with the axes' coefficients; its centre
// weight computed once here, on the host. (A kernel argument is an
// aggregate, docs/gpu.md, so this is a function, not a constructor.)
template <class T>
HeatStep<T> heat_step(FieldView<const T> u, FieldView<T> out, T cx, T cy, T cz) {
  return HeatStep<T>{u, out, cx, cy, cz, HeatStep<T>::centre_weight(cx, cy, cz)};
}

// The Gaussian amp exp(-|x - c|^2 / (2 s0^2)) after time t of diffusion in
// free space: amp (s0^2 / s^2)^(3/2) exp(-|x - c|^2 / (2 s^2)), s^2 = s0^2 +
// 2 kappa t. Per axis the domain's boundaries add images: periodic ones at
// c +- L, walls (zero flux) mirrored ones at -c and 2L - c (with the axis'
// origin at 0); open sides add none. Separable, so the images multiply.
struct Gaussian3 {
  double amp = 1, s0 = 0.1, kappa = 1;
  double centre[3] = {0, 0, 0};
  double length[3] = {1, 1, 1};
  double origin[3] = {0, 0, 0};
  int images[3] = {0, 0, 0};   // 0 none, 1 periodic, 2 mirror

  // The Gaussian is a product over the axes: at(x, t) = peak(s2) *
  // factor(0, x0, s2) * factor(1, x1, s2) * factor(2, x2, s2), s2 =
  // variance(t), multiplied in that order. Diagnostics tabulate the factors
  // per axis (GaussianAxisFactors) and multiply them in the same order,
  // which gives at()'s bits with 3 products per cell instead of up to 9
  // exponentials.
  STRATA_HD double variance(double t) const { return s0 * s0 + 2 * kappa * t; }
  STRATA_HD double peak(double s2) const { return amp * (s0 * s0 / s2) * sqrt(s0 * s0 / s2); }
  STRATA_HD double factor(int a, double xa, double s2) const {
    const double d = xa - centre[a];
    double f = exp(-d * d / (2 * s2));
    if (images[a] == 1) {
      const double dm = d - length[a], dp = d + length[a];
      f += exp(-dm * dm / (2 * s2)) + exp(-dp * dp / (2 * s2));
    } else if (images[a] == 2) {
      const double c = centre[a] - origin[a];
      const double lo = xa - (origin[a] - c), hi = xa - (origin[a] + 2 * length[a] - c);
      f += exp(-lo * lo / (2 * s2)) + exp(-hi * hi / (2 * s2));
    }
    return f;
  }

  STRATA_HD double at(const double x[3], double t) const {
    const double s2 = variance(t);
    double v = peak(s2);
    for (int a = 0; a < 3; ++a) v *= factor(a, x[a], s2);
    return v;
  }
};

struct CellCentres {
  double origin[3];   // global origin of the domain
  double d[3];        // cell size
  index_t start[3];   // global index of the rank's cell (0, 0, 0)
  STRATA_HD double coordinate(int a, index_t i) const {
    return origin[a] + (static_cast<double>(start[a] + i) + 0.5) * d[a];
  }
  STRATA_HD void at(index_t i, index_t j, index_t k, double x[3]) const {
    x[0] = coordinate(0, i);
    x[1] = coordinate(1, j);
    x[2] = coordinate(2, k);
  }
};

template <class T>
struct GaussianInit {
  FieldView<T> u;
  Gaussian3 g;
  CellCentres cells;
  STRATA_HD void operator()(index_t i, index_t j, index_t k) const {
    double x[3];
    cells.at(i, j, k, x);
    u(i, j, k) = static_cast<T>(g.at(x, 0.0));
  }
};

// The Gaussian's factor of each axis at the rank's cell centres, one table
// per axis back to back: out[i] (x, n[0] entries), out[n[0] + j] (y),
// out[n[0] + n[1] + k] (z). Run over n[0] + n[1] + n[2] entries.
struct GaussianAxisFactors {
  Gaussian3 g;
  CellCentres cells;
  double s2;
  index_t n0, n1;
  double* out;
  STRATA_HD void operator()(index_t idx) const {
    const int a = idx < n0 ? 0 : (idx < n0 + n1 ? 1 : 2);
    const index_t i = a == 0 ? idx : (a == 1 ? idx - n0 : idx - n0 - n1);
    out[idx] = g.factor(a, cells.coordinate(a, i), s2);
  }
};

// (u - Gaussian)^2 from the tables of GaussianAxisFactors: the same bits
// as u - g.at(x, t) per cell, the factors multiplied in at()'s order.
template <class T>
struct GaussianError2Separable {
  FieldView<const T> u;
  double peak;
  const double* fx;
  const double* fy;
  const double* fz;
  STRATA_HD double operator()(index_t i, index_t j, index_t k) const {
    double v = peak;
    v *= fx[i];
    v *= fy[j];
    v *= fz[k];
    const double e = static_cast<double>(u(i, j, k)) - v;
    return e * e;
  }
};

}  // namespace strata::kernels::stencil
