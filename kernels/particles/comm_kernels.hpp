// Packing of ghost positions for the per-step forward communication: the
// source atoms of a swap (a list of indices), each shifted by the swap's
// periodic image (+L, 0 or -L per axis), either copied straight into this
// rank's ghost slots (a swap with itself, one rank along an axis) or packed
// x, y, z per atom into a message and unpacked on the other side.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"

namespace strata::kernels::particles {

template <class Real>
struct ShiftedCopy {
  Real *x, *y, *z;   // owned atoms then ghosts
  const int* source;   // indices of the swap's atoms
  Real sx, sy, sz;     // the periodic shift
};

template <class Real>
struct GhostCopy {
  ShiftedCopy<Real> c;
  std::int64_t first;   // first ghost slot the swap fills
  STRATA_HD void operator()(std::int64_t k) const {
    const int j = c.source[k];
    // The sources precede `first`, so reads and writes never overlap.
    c.x[first + k] = c.x[j] + c.sx;
    c.y[first + k] = c.y[j] + c.sy;
    c.z[first + k] = c.z[j] + c.sz;
  }
};

template <class Real>
struct PackPositions {
  ShiftedCopy<Real> c;
  Real* out;
  STRATA_HD void operator()(std::int64_t k) const {
    const int j = c.source[k];
    out[3 * k] = c.x[j] + c.sx;
    out[3 * k + 1] = c.y[j] + c.sy;
    out[3 * k + 2] = c.z[j] + c.sz;
  }
};

template <class Real>
struct UnpackPositions {
  const Real* in;
  Real *x, *y, *z;
  std::int64_t first;
  STRATA_HD void operator()(std::int64_t k) const {
    x[first + k] = in[3 * k];
    y[first + k] = in[3 * k + 1];
    z[first + k] = in[3 * k + 2];
  }
};

}  // namespace strata::kernels::particles
