// The 3-D heat equation du/dt = kappa laplacian(u), explicit Euler in time
// and the 7-point second-order Laplacian in space, and the analytic
// spreading Gaussian it is validated against.
#pragma once

#include <cmath>

#include "kernels/grid/box_kernels.hpp"
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
    out(i, j, k) = update(u(i, j, k), u(i - 1, j, k), u(i + 1, j, k), u(i, j - 1, k), u(i, j + 1, k), u(i, j, k - 1),
                          u(i, j, k + 1));
  }
  // The new value of a cell c from its neighbours along x (xl, xh), y and z.
  STRATA_HD STRATA_FORCEINLINE T update(T c, T xl, T xh, T yl, T yh, T zl, T zh) const {
    return w * c + cx * (xl + xh) + cy * (yl + yh) + cz * (zl + zh);
  }
};

// The heat step from u to out with the axes' coefficients; its centre
// weight computed once here, on the host. (A kernel argument is an
// aggregate, docs/gpu.md, so this is a function, not a constructor.)
template <class T>
HeatStep<T> heat_step(FieldView<const T> u, FieldView<T> out, T cx, T cy, T cz) {
  return HeatStep<T>{u, out, cx, cy, cz, HeatStep<T>::centre_weight(cx, cy, cz)};
}

// The heat step where some axes are periodic and spanned by this rank
// alone ("wrapped"), without the halo copy of those axes before each step
// (a launch of its own, and the index work of its box list): along x and
// z, which a CUDA thread of the box launch keeps, the first and last cell
// read their neighbours across the seam (an index chosen once a thread);
// along y, which a thread walks, the step writes the halo rows of `out`
// itself (the thread that updated row 0 copies it to row n, the one that
// updated row n - 1 to row -1), so the next step reads them as halos. The
// halos of the wrapped axes must hold those copies before the first step
// (one ordinary wrap). Every cell gets HeatStep's value from the same
// operands, so the same bits. An axis not wrapped reads its halo as
// HeatStep does (exchanged or boundary-filled). Made by
// periodic_heat_step() below.
template <class T>
struct PeriodicHeatStep {
  HeatStep<T> step;
  grid::Box box;    // the cells updated: the owned box or a part of it
  index_t n[3];     // owned cells per axis
  index_t low[3];   // what cell 0 reads below it: n - 1 on a wrapped axis, else -1 (its halo)
  index_t high[3];  // what cell n - 1 reads above it: 0 on a wrapped axis, else n
  bool wrap_y;      // y wrapped: write the halo rows of out

  // A CUDA thread takes up to 16 rows (BoxLaunch's 8 elsewhere): its
  // seams' index work (below) is paid once for them, and a 384^3 box
  // still launches 3.5 million threads.
  static constexpr int kMostRows = 16;
  // A thread's index work for the seams, counted in nvcc 13's PTX for
  // sm_90 (both precisions): x's two neighbours' indices (a compare, a
  // select and an addition each, and n - 1: 7), z's likewise with a
  // multiply more for each neighbour plane's offset (8), the two tests of
  // y's halo rows after its rows (6).
  static constexpr double kSeamIntOps = 21;

  STRATA_HD STRATA_FORCEINLINE index_t below(int a, index_t i) const { return i == 0 ? low[a] : i - 1; }
  STRATA_HD STRATA_FORCEINLINE index_t above(int a, index_t i) const { return i == n[a] - 1 ? high[a] : i + 1; }

  grid::BoxLaunchShape shape() const { return grid::BoxLaunchShape(box, grid::box_rows_per_thread(box, kMostRows)); }

  // HeatStep's bytes and 7 FP slots a cell, the box launch's index work
  // a cell and the seams' a thread, and the halo rows of y: a value read
  // and one written for each halo cell of the box's first and last row.
  Work work(std::int64_t cells) const {
    const grid::BoxLaunchShape s = shape();
    const double per_cell = s.int_ops_per_cell() + kSeamIntOps / s.rows;
    Work w = (HeatStep<T>::cell_work() + Work{0, 0, per_cell}) * static_cast<double>(cells);
    if (wrap_y) {
      const double rows = (box.lo[1] == 0 ? 1 : 0) + (box.lo[1] + box.n[1] == n[1] ? 1 : 0);
      w = w + item_work<T>(2, 0, 0) * (rows * static_cast<double>(box.n[0] * box.n[2]));
    }
    return w;
  }
  std::int64_t launch_threads(std::int64_t) const { return shape().threads(); }

  // Cell (i, j, k) alone (the reference).
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
    const FieldView<const T>& u = step.u;
    step.out(i, j, k) = step.update(u(i, j, k), u(below(0, i), j, k), u(above(0, i), j, k), u(i, below(1, j), k),
                                    u(i, above(1, j), k), u(i, j, below(2, k)), u(i, j, above(2, k)));
  }

  // The cells of one CUDA thread of the box launch over `box`
  // (kernels/grid/box_kernels.hpp: box_thread_cells' order), and the y
  // halo rows it writes. Called by the launch (models/diffusion), and by
  // the unit tests for every thread of a launch on the host.
  STRATA_HD STRATA_FORCEINLINE void thread_cells(int rows, std::int64_t x_index, std::int64_t y_thread,
                                                 std::int64_t y_threads, std::int64_t z_block,
                                                 std::int64_t z_blocks) const {
    const int n0 = static_cast<int>(box.n[0]), n1 = static_cast<int>(box.n[1]), n2 = static_cast<int>(box.n[2]);
    if (x_index >= n0) return;
    const FieldView<const T> u = step.u;
    const FieldView<T> out = step.out;
    const index_t i = box.lo[0] + x_index, il = below(0, i), ih = above(0, i);
    const std::int64_t first = y_thread * rows, stride = y_threads * rows;
    for (int k = static_cast<int>(z_block); k < n2; k += static_cast<int>(z_blocks)) {
      const index_t z = box.lo[2] + k, zl = below(2, z), zh = above(2, z);
      for (std::int64_t j0 = first; j0 < n1; j0 += stride) {
        const int j1 = static_cast<int>(j0 + rows < n1 ? j0 + rows : n1);
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
        for (int j = static_cast<int>(j0); j < j1; ++j) {
          const index_t y = box.lo[1] + j;
          out(i, y, z) = step.update(u(i, y, z), u(il, y, z), u(ih, y, z), u(i, y - 1, z), u(i, y + 1, z), u(i, y, zl),
                                     u(i, y, zh));
        }
        if (wrap_y) {
          if (box.lo[1] + j0 == 0) out(i, n[1], z) = out(i, 0, z);
          if (box.lo[1] + j1 == n[1]) out(i, -1, z) = out(i, n[1] - 1, z);
        }
      }
    }
  }

  // The host: rows of x (HeatStep's order of planes), each a vectorised
  // loop over the cells whose x neighbours are i - 1 and i + 1, the seam's
  // cells apart; the y and z neighbours' rows chosen once a row; the y
  // halo rows as on CUDA.
  void host_for(std::int64_t) const;

  void cuda_for(std::int64_t n, void* stream) const;  // models/diffusion/diffusion_cuda.cu

 private:
  void host_row(index_t y, index_t z) const {
    const FieldView<const T> u = step.u;
    const FieldView<T> out = step.out;
    const HeatStep<T> s = step;
    const T* const c = &u(0, y, z);
    const T* const yl = &u(0, below(1, y), z);
    const T* const yh = &u(0, above(1, y), z);
    const T* const zl = &u(0, y, below(2, z));
    const T* const zh = &u(0, y, above(2, z));
    T* const o = &out(0, y, z);
    index_t a = box.lo[0], b = box.lo[0] + box.n[0];
    if (a == 0 && a < b) {
      o[0] = s.update(c[0], c[below(0, 0)], c[above(0, 0)], yl[0], yh[0], zl[0], zh[0]);
      ++a;
    }
    if (b == n[0] && a < b) {
      --b;
      o[b] = s.update(c[b], c[below(0, b)], c[above(0, b)], yl[b], yh[b], zl[b], zh[b]);
    }
#pragma omp simd
    for (index_t i = a; i < b; ++i) o[i] = s.update(c[i], c[i - 1], c[i + 1], yl[i], yh[i], zl[i], zh[i]);
  }
};

// The periodic heat step of `step` over `box` of a rank with n owned
// cells, reading across the seams of the axes `wrapped`.
template <class T>
PeriodicHeatStep<T> periodic_heat_step(const HeatStep<T>& step, const grid::Box& box, const index_t n[3],
                                       const bool wrapped[3]) {
  PeriodicHeatStep<T> p{step, box, {n[0], n[1], n[2]}, {}, {}, wrapped[1]};
  for (int a = 0; a < 3; ++a) {
    p.low[a] = wrapped[a] ? n[a] - 1 : -1;
    p.high[a] = wrapped[a] ? 0 : n[a];
  }
  return p;
}

template <class T>
void PeriodicHeatStep<T>::host_for(std::int64_t) const {
  const index_t n1 = box.n[1], planes = box.n[2];
  if (box.n[0] <= 0 || n1 <= 0 || planes <= 0) return;
  // By pairs of planes, as BoxKernel::host_for walks HeatStep.
  const index_t rows = planes * n1;
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < rows; ++r) {
    const grid::PlaneRow pr = grid::plane_pair_row(r, n1, planes);
    host_row(box.lo[1] + pr.row, box.lo[2] + pr.plane);
  }
  if (wrap_y) {
    const FieldView<T> out = step.out;
#pragma omp parallel for schedule(static)
    for (index_t p = 0; p < planes; ++p) {
      const index_t z = box.lo[2] + p;
      for (index_t i = box.lo[0]; i < box.lo[0] + box.n[0]; ++i) {
        if (box.lo[1] == 0) out(i, n[1], z) = out(i, 0, z);
        if (box.lo[1] + n1 == n[1]) out(i, -1, z) = out(i, n[1] - 1, z);
      }
    }
  }
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
