// Cell lists and Verlet neighbour lists (HOOMD-blue's NeighborList: flat
// lists with counts, a skin, rebuilt when an atom has moved more than half
// of it).
//
// A rank's atoms are its owned atoms [0, n_local) followed by its ghosts
// (periodic or remote images within the ghost cutoff r_c + skin of its
// sub-box). The cells cover the sub-box grown by the ghost cutoff, each at
// least (r_c + skin) / reach wide, so the (2 reach + 1)^3 cells around an
// atom hold every atom within r_c + skin of it (reach 2, as LAMMPS's
// default bin size of half the cutoff: 290 candidates per atom at the LJ
// liquid's density instead of 500 with reach 1). The cell order comes from
// a counting sort (cell_start, cell_atoms), which is deterministic; the
// build positions are also kept in that order (binned_x, ...), so the
// candidates of a cell are read contiguously.
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
  int reach = 1;                   // cells searched on each side

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

// The build positions in cell order (binned[k] = x[cell_atoms[k]]), so that
// a cell's candidates are read contiguously.
template <class Real>
struct BinPositions {
  const Real *x, *y, *z;
  const int* cell_atoms;
  Real *binned_x, *binned_y, *binned_z;
  STRATA_HD void operator()(std::int64_t k) const {
    const int j = cell_atoms[k];
    binned_x[k] = x[j];
    binned_y[k] = y[j];
    binned_z[k] = z[j];
  }
};

// Rows hold a multiple of this many entries, padded (capacity is one too).
inline constexpr int kRowPad = 8;

// The rows are stored in tiles of kTile atoms, column by column: entry k
// of atom i is at ((i / kTile) * capacity + k) * kTile + i % kTile. A warp
// of 32 consecutive atoms reading its k-th entries reads 128 contiguous
// bytes (4 sectors, where row-major rows cost one sector per atom), and on
// the host a tile's rows are one contiguous block of 32 capacity ints.
inline constexpr int kTile = 32;

// Atom i's first entry; its entry k is row[k * kTile].
template <class I>
STRATA_HD STRATA_FORCEINLINE I* list_row(I* neighbours, std::int64_t i, std::int64_t capacity) {
  return neighbours + (i / kTile) * capacity * kTile + i % kTile;
}

// The entries a list of n atoms' rows of `capacity` occupies (whole tiles).
inline std::int64_t list_entries(std::int64_t n, std::int64_t capacity) {
  return (n + kTile - 1) / kTile * kTile * capacity;
}

template <class Real>
struct BuildNeighbours {
  const Real *x, *y, *z;                      // build positions, by atom
  const Real *binned_x, *binned_y, *binned_z;  // the same in cell_atoms order
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
    const int r = grid.reach;
    int* row = list_row(neighbours, i, capacity);
    const std::int64_t last = capacity - 1;
    std::int64_t k = 0;
    for (int kz = cz - r; kz <= cz + r; ++kz) {
      if (kz < 0 || kz >= grid.n[2]) continue;
      for (int ky = cy - r; ky <= cy + r; ++ky) {
        if (ky < 0 || ky >= grid.n[1]) continue;
        const int x_lo = cx - r < 0 ? 0 : cx - r, x_hi = cx + r >= grid.n[0] ? grid.n[0] - 1 : cx + r;
        // Cells x_lo..x_hi of a row are consecutive: one contiguous range.
        const int base = (kz * grid.n[1] + ky) * grid.n[0];
        const int end = cell_start[base + x_hi + 1];
        for (int a = cell_start[base + x_lo]; a < end; ++a) {
          const Real dx = xi - binned_x[a], dy = yi - binned_y[a], dz = zi - binned_z[a];
          const int j = cell_atoms[a];
          const bool inside = (dx * dx + dy * dy + dz * dz < cutsq) & (j != i);
          row[(k < last ? k : last) * kTile] = j;
          k += inside ? 1 : 0;
        }
      }
    }
    count[i] = static_cast<int>(k);
    // Pad the row with i itself to a multiple of kRowPad (PairForces reads
    // whole groups; a pair with itself weighs nothing).
    for (std::int64_t p = k; p % kRowPad != 0 && p < capacity; ++p) row[p * kTile] = static_cast<int>(i);
  }
};

// An int per atom, for its largest: a list's length (did a row overflow?),
// a migration code (was an atom lost?).
struct RowCount {
  const int* count;
  STRATA_HD double operator()(std::int64_t i) const { return count[i]; }
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

}  // namespace strata::kernels::particles
