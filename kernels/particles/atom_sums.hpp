// Per-atom values for md's exact sums (engine/runtime/fixed_sum.hpp's
// exact_sum_over_ranks, the same sum the grids use) and health checks.
#pragma once

#include <cstdint>

#include "kernels/core/exact_sum.hpp"
#include "kernels/core/hd.hpp"

namespace strata::kernels::particles {

using kernels::MaxOp;

// Atom i's value: a[i], a[i]^2 + b[i]^2 + c[i]^2 when squares (for v^2).
template <class Real>
struct AtomValue {
  const Real *a, *b = nullptr, *c = nullptr;
  bool squares = false;
  STRATA_HD STRATA_FORCEINLINE double operator()(std::int64_t i) const {
    const double u = a[i];
    if (!squares) return u;
    const double v = b[i], w = c[i];
    return u * u + v * v + w * w;
  }
};

// 1 for an atom whose position or velocity is NaN or Inf.
template <class Real>
struct NonFiniteAtom {
  const Real *x, *y, *z, *vx, *vy, *vz;
  STRATA_HD double operator()(std::int64_t i) const {
    const Real s = x[i] + y[i] + z[i] + vx[i] + vy[i] + vz[i];
    return (s - s == s - s) ? 0.0 : 1.0;
  }
};

}  // namespace strata::kernels::particles
