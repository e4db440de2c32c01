// The pieces of strata's exact sums and maxima, shared by every kernel
// family (grid fields, atoms): a value times a power of two rounded to a
// signed 128-bit integer, and integer addition, which is associative, so a
// sum is the same bit for bit whatever the order, the decomposition or the
// backend (engine/runtime/fixed_sum.hpp adds the ranks' partials).
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"

namespace strata::kernels {

// A signed 128-bit integer as two 64-bit words.
struct Fixed128 {
  std::uint64_t lo = 0;
  std::int64_t hi = 0;

  STRATA_HD static Fixed128 from(std::int64_t v) {
    Fixed128 r;
    r.lo = static_cast<std::uint64_t>(v);
    r.hi = v < 0 ? -1 : 0;
    return r;
  }
  STRATA_HD Fixed128 operator+(const Fixed128& o) const {
    Fixed128 r;
    r.lo = lo + o.lo;
    r.hi = hi + o.hi + (r.lo < lo ? 1 : 0);
    return r;
  }
  // The value as a double (one rounding: hi * 2^64 is exact, the sum rounds once
  // unless hi is large, when lo no longer matters).
  STRATA_HD double to_double() const {
    return static_cast<double>(hi) * 18446744073709551616.0 + static_cast<double>(lo);
  }
};

struct Fixed128Plus {
  STRATA_HD Fixed128 operator()(const Fixed128& a, const Fixed128& b) const { return a + b; }
};

// v (already scaled by a power of two, so |v| < 2^63) rounded to the
// nearest integer, ties to even, as llrint and __double2ll_rn do.
STRATA_HD STRATA_FORCEINLINE Fixed128 quantise(double v) {
#if defined(__CUDA_ARCH__)
  return Fixed128::from(__double2ll_rn(v));
#else
  return Fixed128::from(__builtin_llrint(v));
#endif
}

// The larger of two values, keeping a NaN from either side (NaN compares
// false with everything, so a plain a > b ? a : b drops a NaN unless it
// comes last): a maximum that is also a health check.
struct MaxOp {
  STRATA_HD double operator()(double a, double b) const { return a > b ? a : (b > a ? b : (a != a ? a : b)); }
};

// The two passes of an exact sum of f(idx) (engine/runtime/fixed_sum.hpp):
// |f(idx)|, a NaN kept, whose maximum fixes the scale; then f(idx) times
// that power of two (an exact product), rounded to a Fixed128. Where f
// reduces itself on the host (f.host_reduce(n, init, op, map), a grid box
// by rows), the passes go through it with their map.
struct Abs {
  STRATA_HD STRATA_FORCEINLINE double operator()(double v) const { return v < 0 ? -v : v; }
};
struct Quantise {
  double scale;
  STRATA_HD STRATA_FORCEINLINE Fixed128 operator()(double v) const { return quantise(v * scale); }
};

template <class F, class Map>
struct Mapped {
  F f;
  Map map;
  STRATA_HD STRATA_FORCEINLINE auto operator()(std::int64_t idx) const { return map(f(idx)); }
  // f's declared device work, if any (kernels/core/work.hpp).
  template <class G = F>
    requires requires(const G& g, std::int64_t n) { g.work(n); }
  auto work(std::int64_t n) const {
    return f.work(n);
  }
  template <class T, class Op>
    requires requires(const F& g, std::int64_t n, T init, Op op, Map m) { g.host_reduce(n, init, op, m); }
  T host_reduce(std::int64_t n, T init, Op op) const {
    return f.host_reduce(n, init, op, map);
  }
};
template <class F>
using Magnitude = Mapped<F, Abs>;
template <class F>
using Quantised = Mapped<F, Quantise>;

}  // namespace strata::kernels
