// All-pairs gravity with Plummer softening, the numerics of the `nbody`
// model. The acceleration and potential of body i from bodies j:
//
//   a_i   = G sum_{j != i} m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^(3/2)
//   phi_i = -G sum_{j != i} m_j / (|r_j - r_i|^2 + eps^2)^(1/2)
//
// (Plummer softening: Aarseth, Gravitational N-Body Simulations, 2003, eq.
// 2.2; GPU Gems 3 ch. 31, eq. 1-3). `pair_interaction` is the reference:
// every kernel (the host group loop below, the CUDA shared-memory tiles in
// models/nbody/gravity_cuda.cu) adds the pairs of a body in ascending
// source index with exactly these operations, so a body's sum has one fixed
// order whatever the decomposition over ranks or threads.
//
// Bodies are float4/double4-like records (x, y, z, m) in Real; sums are in
// Real. G is applied once, when the sums are finished (KickDrift).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/work.hpp"

namespace strata::kernels::particles {

// Adds the pull of source s (x, y, z, m) on a body at (x, y, z), and, when
// Potential, its potential; counted as 20 flops per interaction by the GPU
// Gems 3 ch. 31 convention (here 21 operations, the sqrt and the division
// among them). The leapfrog needs the accelerations only: the potential is
// summed on the steps whose diagnostics use it. Without Masses the source's
// mass is left out (every body's the same: the caller multiplies the sums
// by it once), one multiplication a pair fewer.
template <bool Potential = true, bool Masses = true, class Real>
STRATA_HD STRATA_FORCEINLINE void pair_interaction(Real x, Real y, Real z, const Real* s, Real eps2, Real& ax, Real& ay,
                                                   Real& az, Real& phi) {
  const Real dx = s[0] - x, dy = s[1] - y, dz = s[2] - z;
  const Real r2 = dx * dx + dy * dy + dz * dz + eps2;
  const Real inv_r = Real(1) / std::sqrt(r2);
  const Real m_inv_r = Masses ? s[3] * inv_r : inv_r;
  const Real m_inv_r3 = m_inv_r * inv_r * inv_r;
  ax = ax + m_inv_r3 * dx;
  ay = ay + m_inv_r3 * dy;
  az = az + m_inv_r3 * dz;
  if constexpr (Potential) phi = phi - m_inv_r;
}

// The sums of a block of targets over a block of sources, continued from
// what acc/phi hold: targets [0, n_targets) with global indices
// target_first + t, sources [0, n_sources) with global indices source_first
// + s; a target skips itself. acc: 3 per target, phi: 1 per target.
template <class Real>
struct GravityBlock {
  const Real* targets;      // 4 per target: x, y, z, m
  const Real* sources;      // 4 per source
  std::int64_t n_targets, n_sources, target_first, source_first;
  Real eps2;
  Real* acc;
  Real* phi;
  bool potential;   // sum phi too (else phi is left as it is)
  bool clear;       // start the sums from zero (the first source block), not from acc/phi
  // Each pair's sum carries its source's mass; false where every body has
  // the same mass, which the caller multiplies the finished sums by
  // (pair_interaction's Masses).
  bool masses = true;

  // One body's sums; the reference the tiled kernels are compared with.
  STRATA_HD void body(std::int64_t t) const {
    if (potential) {
      masses ? body_sums<true, true>(t) : body_sums<true, false>(t);
    } else {
      masses ? body_sums<false, true>(t) : body_sums<false, false>(t);
    }
  }

  template <bool Potential, bool Masses = true>
  STRATA_HD void body_sums(std::int64_t t) const {
    const Real x = targets[4 * t], y = targets[4 * t + 1], z = targets[4 * t + 2];
    Real ax = 0, ay = 0, az = 0, p = 0;
    if (!clear) {
      ax = acc[3 * t], ay = acc[3 * t + 1], az = acc[3 * t + 2];
      if (Potential) p = phi[t];
    }
    const std::int64_t self = target_first + t - source_first;
    for (std::int64_t s = 0; s < n_sources; ++s) {
      if (s == self) continue;
      pair_interaction<Potential, Masses>(x, y, z, sources + 4 * s, eps2, ax, ay, az, p);
    }
    acc[3 * t] = ax;
    acc[3 * t + 1] = ay;
    acc[3 * t + 2] = az;
    if (Potential) phi[t] = p;
  }
};

// A group of kGroup consecutive targets per call, the sources in the outer
// loop and the targets in the inner one: the compiler vectorises across
// targets (each lane one body, its pairs still in ascending source order,
// so the result is bitwise that of GravityBlock::body). Two AVX2 vectors
// of each precision.
template <class Real>
struct GravityGroup {
  static constexpr int kGroup = sizeof(Real) == 4 ? 16 : 8;
  GravityBlock<Real> b;

  STRATA_HD void operator()(std::int64_t g) const {
    if (b.potential) {
      b.masses ? group<true, true>(g) : group<true, false>(g);
    } else {
      b.masses ? group<false, true>(g) : group<false, false>(g);
    }
  }

  template <bool Potential, bool Masses>
  STRATA_HD void group(std::int64_t g) const {
    const std::int64_t t0 = g * kGroup;
    if (t0 + kGroup > b.n_targets) {   // the ragged end: one body at a time
      for (std::int64_t t = t0; t < b.n_targets; ++t) b.template body_sums<Potential, Masses>(t);
      return;
    }
    Real x[kGroup], y[kGroup], z[kGroup], ax[kGroup], ay[kGroup], az[kGroup], p[kGroup];
    for (int l = 0; l < kGroup; ++l) {
      const std::int64_t t = t0 + l;
      x[l] = b.targets[4 * t];
      y[l] = b.targets[4 * t + 1];
      z[l] = b.targets[4 * t + 2];
      ax[l] = ay[l] = az[l] = p[l] = Real(0);
    }
    if (!b.clear) {
      for (int l = 0; l < kGroup; ++l) {
        const std::int64_t t = t0 + l;
        ax[l] = b.acc[3 * t];
        ay[l] = b.acc[3 * t + 1];
        az[l] = b.acc[3 * t + 2];
        if (Potential) p[l] = b.phi[t];
      }
    }
    const std::int64_t self0 = b.target_first + t0 - b.source_first;
    for (std::int64_t s = 0; s < b.n_sources; ++s) {
      const Real* src = b.sources + 4 * s;
      if (s >= self0 && s < self0 + kGroup) {   // one lane meets itself
        for (int l = 0; l < kGroup; ++l)
          if (s != self0 + l) pair_interaction<true, Masses>(x[l], y[l], z[l], src, b.eps2, ax[l], ay[l], az[l], p[l]);
        continue;
      }
      // The potential is summed whether or not it is kept: without it g++
      // 12 left the fp64 loop scalar (1.7x slower); one subtraction a pair
      // is cheap on the host. Without the masses it left it scalar again
      // (2x slower) until told the lanes are independent.
#if !defined(__CUDA_ARCH__)
#pragma omp simd
#endif
      for (int l = 0; l < kGroup; ++l)
        pair_interaction<true, Masses>(x[l], y[l], z[l], src, b.eps2, ax[l], ay[l], az[l], p[l]);
    }
    for (int l = 0; l < kGroup; ++l) {
      const std::int64_t t = t0 + l;
      b.acc[3 * t] = ax[l];
      b.acc[3 * t + 1] = ay[l];
      b.acc[3 * t + 2] = az[l];
      if (Potential) b.phi[t] = p[l];
    }
  }
  static std::int64_t groups(std::int64_t n_targets) { return (n_targets + kGroup - 1) / kGroup; }
};

// Leapfrog kick-drift-kick (Verlet; Hockney & Eastwood 1988, sec. 4-5):
//   v += (dt/2) G a;  x += dt v;   [forces at the new x]   v += (dt/2) G a.
// BodyKick: v += h G a with h = dt/2. (Named apart from md's Kick of
// integrate.hpp: two class templates of one name would be one symbol to the
// linker, which keeps either's instantiations for both models.)
template <class Real>
struct BodyKick {
  static constexpr bool kLightIterations = true;
  Real* vel;
  const Real* acc;
  Real g_half_dt;
  STRATA_HD void operator()(std::int64_t t) const {
    for (int d = 0; d < 3; ++d) vel[3 * t + d] = vel[3 * t + d] + g_half_dt * acc[3 * t + d];
  }
  kernels::Work work(std::int64_t n) const { return item_work<Real>(2 * 3 + 3, 3) * static_cast<double>(n); }
};

// The first kick and the drift of a step in one pass (the same operations
// as BodyKick then a drift, element by element: the same bits).
template <class Real>
struct BodyKickDrift {
  static constexpr bool kLightIterations = true;
  Real* body;   // 4 per body: x, y, z, m
  Real* vel;
  const Real* acc;
  Real g_half_dt, dt;
  STRATA_HD void operator()(std::int64_t t) const {
    for (int d = 0; d < 3; ++d) vel[3 * t + d] = vel[3 * t + d] + g_half_dt * acc[3 * t + d];
    for (int d = 0; d < 3; ++d) body[4 * t + d] = body[4 * t + d] + dt * vel[3 * t + d];
  }
  kernels::Work work(std::int64_t n) const { return item_work<Real>(4 + 2 * 3 + 3 + 3, 6) * static_cast<double>(n); }
};

}  // namespace strata::kernels::particles
