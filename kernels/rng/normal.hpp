// Standard normal variates from Philox4x32-10 by the Box-Muller transform.
//
// Box and Muller, "A Note on the Generation of Random Normal Deviates",
// Ann. Math. Statist. 29 (1958) 610-611: for independent u1, u2 uniform on
// (0, 1],
//   r = sqrt(-2 ln u1),  theta = 2 pi u2,  z0 = r cos(theta),  z1 = r sin(theta)
// are independent N(0, 1).
//
// One Philox call (one counter) yields 128 random bits:
//   float:  4 normals, two pairs, each uniform from one word (uniform_float);
//   double: 2 normals, one pair, each uniform from two words (uniform_double,
//           53 bits).
// The uniforms lie in (0, 1], so the logarithm never sees 0 and |z| is
// bounded: sqrt(2 * 33 ln 2) ~ 6.76 for float, sqrt(2 * 54 ln 2) ~ 8.65 for
// double.
//
// These are strata's own normals; they do not reproduce curand_normal.
// Host and device results agree up to the differences between the host libm
// and CUDA's log/sqrt/sin/cos (a few ulp), not bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/vector_math.hpp"
#include "kernels/rng/philox.hpp"

namespace strata::rng {

// The transcendentals of a formula written once: ScalarMath's are libm's
// (host) or CUDA's; LaneMath's libmvec's inside an `omp simd` loop on the
// host (vector_math.hpp). They differ in the last bits: a kernel draws
// every sample of a run through one of them.
struct ScalarMath {
  template <class R> STRATA_HD static R exp(R x) { return std::exp(x); }
  template <class R> STRATA_HD static R log(R x) { return std::log(x); }
  template <class R> STRATA_HD static R cos(R x) { return std::cos(x); }
  template <class R> STRATA_HD static R sin(R x) { return std::sin(x); }
  template <class R> STRATA_HD static R erfc(R x) { return std::erfc(x); }
};
struct LaneMath {
  template <class R> static R exp(R x) { return vmath::exp(x); }
  template <class R> static R log(R x) { return vmath::log(x); }
  template <class R> static R cos(R x) { return vmath::cos(x); }
  template <class R> static R sin(R x) { return vmath::sin(x); }
  template <class R> static R erfc(R x) { return vmath::erfc(x); }
};

// How many normals philox_normals<Real> writes per Philox call.
template <class Real>
struct NormalsPerCall;

template <>
struct NormalsPerCall<float> {
  static constexpr unsigned value = 4;
};

template <>
struct NormalsPerCall<double> {
  static constexpr unsigned value = 2;
};

namespace detail {

// r = sqrt(-2 ln u1) and theta = 2 pi u2 in Real arithmetic (std::log etc.
// pick the float overloads for float on host and device).
template <class Real, class Math = ScalarMath>
STRATA_HD STRATA_FORCEINLINE Real box_muller_radius(Real u1) {
  return std::sqrt(static_cast<Real>(-2) * Math::log(u1));
}

template <class Real>
STRATA_HD STRATA_FORCEINLINE Real box_muller_angle(Real u2) {
  return static_cast<Real>(6.28318530717958647692528676655900577) * u2;
}

// The uniforms (u1, u2) of Box-Muller pair `pair` of one Philox output.
STRATA_HD STRATA_FORCEINLINE void box_muller_uniforms(const PhiloxCounter& w, unsigned pair, float& u1, float& u2) {
  u1 = uniform_float(pair == 0u ? w.v[0] : w.v[2]);
  u2 = uniform_float(pair == 0u ? w.v[1] : w.v[3]);
}

STRATA_HD STRATA_FORCEINLINE void box_muller_uniforms(const PhiloxCounter& w, unsigned /*pair*/, double& u1,
                                                      double& u2) {
  u1 = uniform_double(w.v[0], w.v[1]);
  u2 = uniform_double(w.v[2], w.v[3]);
}

// Box-Muller pair `pair` of one Philox output: z0 = r cos(theta), z1 = r sin(theta).
template <class Real, class Math = ScalarMath>
STRATA_HD STRATA_FORCEINLINE void box_muller_pair(const PhiloxCounter& w, unsigned pair, Real& z0, Real& z1) {
  Real u1, u2;
  box_muller_uniforms(w, pair, u1, u2);
  const Real r = box_muller_radius<Real, Math>(u1);
  const Real theta = box_muller_angle(u2);
  z0 = r * Math::cos(theta);
  z1 = r * Math::sin(theta);
}

}  // namespace detail

// Writes NormalsPerCall<Real>::value normals to out[0..value-1], computed from
// philox4x32_10(philox_counter(subsequence, call), key); out[2p] and
// out[2p + 1] are the cosine and sine halves of pair p. Distinct
// (subsequence, call) pairs give independent draws, so a thread can key its
// normals by (path id, step) without any shared state.
template <class Real>
STRATA_HD inline void philox_normals(PhiloxKey key, std::uint64_t subsequence, std::uint64_t call, Real* out) {
  const PhiloxCounter w = philox4x32_10(philox_counter(subsequence, call), key);
  for (unsigned pair = 0; pair < NormalsPerCall<Real>::value / 2; ++pair) {
    detail::box_muller_pair<Real>(w, pair, out[2 * pair], out[2 * pair + 1]);
  }
}

// Normal number `index` of `subsequence`: component index % per_call of call
// index / per_call, bit-identical to what philox_normals writes there when
// both run on the same side (host or device). For
// scattered access; it still pays a whole Philox evaluation for one normal
// (the other components are discarded), so sequential consumers should use
// philox_normals.
template <class Real>
STRATA_HD inline Real philox_normal(PhiloxKey key, std::uint64_t subsequence, std::uint64_t index) {
  constexpr unsigned per_call = NormalsPerCall<Real>::value;
  const PhiloxCounter w = philox4x32_10(philox_counter(subsequence, index / per_call), key);
  const unsigned component = static_cast<unsigned>(index % per_call);
  Real z0, z1;
  detail::box_muller_pair<Real>(w, component / 2u, z0, z1);
  return component % 2u == 0u ? z0 : z1;
}

}  // namespace strata::rng
