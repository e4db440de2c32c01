// Per-atom values summed exactly: each value is scaled by a power of two
// (chosen from the global largest magnitude) and rounded to a 128-bit
// integer (kernels/core's Fixed128), and integers add associatively, so
// the sums are bitwise the same for any decomposition, thread count and
// atom order, and within n 2^-62 max|value| of the exact sum.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/exact_sum.hpp"

namespace strata::kernels::particles {

using kernels::Fixed128;
using kernels::Fixed128Plus;
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

template <class F>
struct AbsOf {
  F f;
  STRATA_HD double operator()(std::int64_t i) const {
    const double v = f(i);
    return v < 0 ? -v : v;
  }
};

template <class F>
struct QuantisedAtom {
  F f;
  double scale;   // a power of two: the product is exact
  STRATA_HD STRATA_FORCEINLINE Fixed128 operator()(std::int64_t i) const {
    return quantise(f(i) * scale);
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
