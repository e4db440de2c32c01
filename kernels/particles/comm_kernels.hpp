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

}  // namespace strata::kernels::particles
