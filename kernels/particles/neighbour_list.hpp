// Cell lists and Verlet neighbour lists (HOOMD-blue's NeighborList: flat
// lists with counts, a skin, rebuilt when an atom has moved more than half
// of it).
//
// A rank's atoms are its owned atoms [0, n_local) followed by its ghosts
// (periodic or remote images within the ghost cutoff r_c + skin of its
// sub-box). The cells cover the sub-box grown by the ghost cutoff, each at
// least r_c + skin wide, so the 27 cells around an atom hold every atom
// within r_c + skin of it. The cell order comes from a counting sort
// (cell_start, cell_atoms), which is deterministic.
//
// The lists are full (each owned atom lists every neighbour, owned or
// ghost), not half lists with Newton's third law: each atom then sums its
// own force in a fixed order with no write to another atom, so there are no
// atomics on CUDA, no per-thread force copies on the host, the result is
// bitwise the same for any thread count, and ghost forces never need to be
// sent back over MPI. The price is twice the pair evaluations.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"

namespace strata::kernels::particles {

template <class Real>
struct CellGrid {
  Real lo[3] = {0, 0, 0};          // corner of cell (0, 0, 0)
  Real inv_width[3] = {1, 1, 1};   // 1 / cell width per axis
  int n[3] = {1, 1, 1};            // cells per axis

  STRATA_HD STRATA_FORCEINLINE int axis_cell(int a, Real v) const {
    int c = static_cast<int>((v - lo[a]) * inv_width[a]);
    c = c < 0 ? 0 : c;
    return c >= n[a] ? n[a] - 1 : c;
  }
  STRATA_HD STRATA_FORCEINLINE int cell_of(Real x, Real y, Real z) const {
    return (axis_cell(2, z) * n[1] + axis_cell(1, y)) * n[0] + axis_cell(0, x);
  }
  std::int64_t cells() const { return static_cast<std::int64_t>(n[0]) * n[1] * n[2]; }
};

// The cell of every atom (owned and ghost), for the counting sort.
template <class Real>
struct CellIndex {
  const Real *x, *y, *z;
  CellGrid<Real> grid;
  int* cell;
  STRATA_HD void operator()(std::int64_t i) const { cell[i] = grid.cell_of(x[i], y[i], z[i]); }
};

// Owned atom i's full list: every other atom within sqrt(cutsq), in cell
// order and, within a cell, in counting-sort order. Row i of `neighbours`
// holds `capacity` entries; count[i] may exceed it, and the caller then
// grows the capacity and builds again.
template <class Real>
struct BuildNeighbours {
  const Real *x, *y, *z;
  CellGrid<Real> grid;
  const int* cell_start;   // cells + 1 offsets into cell_atoms
  const int* cell_atoms;   // atom indices sorted by cell
  Real cutsq;              // (r_c + skin)^2
  int* neighbours;
  int* count;
  std::int64_t capacity;

  STRATA_HD void operator()(std::int64_t i) const {
    const Real xi = x[i], yi = y[i], zi = z[i];
    const int cx = grid.axis_cell(0, xi), cy = grid.axis_cell(1, yi), cz = grid.axis_cell(2, zi);
    int* row = neighbours + i * capacity;
    std::int64_t k = 0;
    for (int kz = cz - 1; kz <= cz + 1; ++kz) {
      if (kz < 0 || kz >= grid.n[2]) continue;
      for (int ky = cy - 1; ky <= cy + 1; ++ky) {
        if (ky < 0 || ky >= grid.n[1]) continue;
        for (int kx = cx - 1; kx <= cx + 1; ++kx) {
          if (kx < 0 || kx >= grid.n[0]) continue;
          const int c = (kz * grid.n[1] + ky) * grid.n[0] + kx;
          for (int a = cell_start[c]; a < cell_start[c + 1]; ++a) {
            const int j = cell_atoms[a];
            if (j == i) continue;
            const Real dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
            if (dx * dx + dy * dy + dz * dz < cutsq) {
              if (k < capacity) row[k] = j;
              ++k;
            }
          }
        }
      }
    }
    count[i] = static_cast<int>(k);
  }
};

// Squared distance each owned atom has moved since the last build; the
// largest, all-reduced, decides the rebuild (> (skin/2)^2).
template <class Real>
struct Displacement2 {
  const Real *x, *y, *z, *x0, *y0, *z0;
  STRATA_HD double operator()(std::int64_t i) const {
    const double dx = static_cast<double>(x[i]) - x0[i], dy = static_cast<double>(y[i]) - y0[i],
                 dz = static_cast<double>(z[i]) - z0[i];
    return dx * dx + dy * dy + dz * dz;
  }
};

struct MaxOf {
  STRATA_HD double operator()(double a, double b) const { return a > b ? a : b; }
};

}  // namespace strata::kernels::particles
