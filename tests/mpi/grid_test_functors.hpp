// Functors of the grid-layer tests (tests/mpi/test_grid_mpi.cpp), and
// their kernel list (engine/backend/parallel.hpp).
#pragma once

#include <cstdint>

#include "engine/grid/grid_instantiate.hpp"
#include "kernels/grid/field_view.hpp"

namespace strata::test {

using kernels::grid::FieldView;
using kernels::grid::index_t;

// A value in [-1, 1) from a global cell index (splitmix64), the same on
// every rank and backend.
STRATA_HD inline double cell_noise(index_t gi, index_t gj, index_t gk) {
  std::uint64_t z = static_cast<std::uint64_t>(gi + 7919 * gj + 104729 * gk) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

// An integer label of a global cell, exact in float for grids up to 64^3.
STRATA_HD inline double cell_label(index_t gi, index_t gj, index_t gk) {
  return static_cast<double>(1 + gi + 64 * gj + 4096 * gk);
}

template <class T>
struct FillCells {
  FieldView<T> f;
  index_t start[3];
  bool noise;
  STRATA_HD void operator()(index_t i, index_t j, index_t k) const {
    const index_t g[3] = {start[0] + i, start[1] + j, start[2] + k};
    f(i, j, k) = static_cast<T>(noise ? cell_noise(g[0], g[1], g[2]) : cell_label(g[0], g[1], g[2]));
  }
};

// A halo-2 stencil with diagonal terms (reaches faces, edges and corners):
// fourth-order Laplacian along each axis plus a cross term per plane.
template <class T>
struct WideStencil {
  FieldView<const T> in;
  FieldView<T> out;
  int dims;
  T c;
  STRATA_HD void operator()(index_t i, index_t j, index_t k) const {
    const T centre = in(i, j, k);
    T lap = T(-1) / 12 * (in(i - 2, j, k) + in(i + 2, j, k) + in(i, j - 2, k) + in(i, j + 2, k)) +
            T(16) / 12 * (in(i - 1, j, k) + in(i + 1, j, k) + in(i, j - 1, k) + in(i, j + 1, k)) -
            T(60) / 12 * centre;
    T cross = in(i + 1, j + 1, k) - in(i - 1, j + 1, k) - in(i + 1, j - 1, k) + in(i - 1, j - 1, k);
    if (dims == 3) {
      lap += T(-1) / 12 * (in(i, j, k - 2) + in(i, j, k + 2)) + T(16) / 12 * (in(i, j, k - 1) + in(i, j, k + 1)) -
             T(30) / 12 * centre;
      cross += in(i + 1, j - 1, k + 1) - in(i - 1, j + 1, k - 1);
    }
    out(i, j, k) = centre + c * lap + c / 4 * cross;
  }
};

template <class T>
struct CellValue {
  FieldView<const T> f;
  STRATA_HD double operator()(index_t i, index_t j, index_t k) const { return static_cast<double>(f(i, j, k)); }
};

}  // namespace strata::test

// global_max of the labels (the exact-sum test) in FP64 only.
#define STRATA_GRID_TEST_KERNELS(M, Real)                   \
  STRATA_GRID_FOR(M, strata::test::FillCells<Real>)         \
  STRATA_GRID_FOR(M, strata::test::WideStencil<Real>)       \
  STRATA_GRID_SUM(M, strata::test::CellValue<Real>)         \
  STRATA_ONCE(Real, STRATA_GRID_MAX(M, strata::test::CellValue<double>))
STRATA_DECLARE_KERNELS(STRATA_GRID_TEST_KERNELS)
