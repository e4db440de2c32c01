// Ghost positions for the per-step forward communication (LAMMPS's
// pack_comm/unpack_comm): the source atoms of a swap (a list of indices,
// or none: atom k itself), each shifted by the swap's periodic image (+L,
// 0 or -L per axis), copied to three destination arrays: this rank's ghost
// slots (a swap with itself, one rank along an axis; or a message
// unpacked) or the x, y and z blocks of a message.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"

namespace strata::kernels::particles {

template <class Real>
struct CopyPositions {
  const Real *x, *y, *z;
  const int* source;   // nullptr: atom k itself
  Real sx, sy, sz;     // the periodic shift
  Real *to_x, *to_y, *to_z;
  STRATA_HD void operator()(std::int64_t k) const {
    // A ghost copy's sources precede the slots it fills: reads and writes never overlap.
    const std::int64_t j = source != nullptr ? source[k] : k;
    to_x[k] = x[j] + sx;
    to_y[k] = y[j] + sy;
    to_z[k] = z[j] + sz;
  }
};

// A ghost swap with the rank itself at a rebuild (find_ghosts): the build
// positions as CopyPositions<double> copies them (the same sums), and, for
// each ghost, its owned root atom and which swap's shift each axis adds
// (PackAtoms rebuilds its position from these each step): a source that is
// itself a ghost passes its own on, with this axis's side added.
struct CopyGhostKeys {
  const double *x, *y, *z;
  const int *source;
  double sx, sy, sz;  // the periodic shift
  int axis, side;
  int n_local;
  int first;                   // the first slot filled (an atom index, >= n_local)
  double *to_x, *to_y, *to_z;  // the slots' build positions (k-th at first + k)
  int *root, *image;           // per ghost (atom n_local + g)
  STRATA_HD void operator()(std::int64_t k) const {
    const std::int64_t j = source[k];
    to_x[k] = x[j] + sx;
    to_y[k] = y[j] + sy;
    to_z[k] = z[j] + sz;
    const bool ghost = j >= n_local;
    const std::int64_t g = first - n_local + k;
    root[g] = ghost ? root[j - n_local] : static_cast<int>(j);
    image[g] = (ghost ? image[j - n_local] : 0) | ((1 + side) << (2 * axis));
  }
};

}  // namespace strata::kernels::particles
