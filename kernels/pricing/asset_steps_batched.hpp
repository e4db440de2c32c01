// step_asset (asset_models.hpp) for kBatch lanes at once, host only: the
// same formulas in `omp simd` loops over the lanes, with libmvec's log and
// erfc (kernels/core/vector_math.hpp) where a step needs them. One copy of
// one asset per call: prev/next are the lanes' log prices before and after
// the step, w their Brownian increments (already correlated) and e the
// model's own normal, both to be multiplied by `sign` (-1: the antithetic
// path); var receives the step variance; v is the lanes' variance (Heston),
// updated in place.
#pragma once

#include <cmath>

#include "kernels/core/vector_math.hpp"
#include "kernels/pricing/asset_models.hpp"

namespace strata::kernels::pricing {

template <int kBatch, class Real>
inline void gbm_step_batch(const AssetStep<Real>& a, Real dt, Real sqrt_dt, const Real* w, Real sign, const Real* prev,
                           Real* next, Real* var) {
  const Real drift = (a.carry - Real(0.5) * a.vol * a.vol) * dt;
  const Real diffusion = a.vol * sqrt_dt;
  const Real step_var = a.vol * a.vol * dt;
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    next[l] = prev[l] + (drift + diffusion * (sign * w[l]));
    var[l] = step_var;
  }
}

// Merton: the GBM step, then the jumps. e holds the count's normal (its
// uniform Phi(sign * e)) and j the jump sizes' normal. poisson_count's
// inversion runs in every lane until none is still below its uniform:
// each lane takes the same steps as poisson_count would alone.
template <int kBatch, class Real>
inline void merton_step_batch(const AssetStep<Real>& a, Real dt, Real sqrt_dt, const Real* w, const Real* e,
                              const Real* j, Real sign, const Real* prev, Real* next, Real* var) {
  gbm_step_batch<kBatch>(a, dt, sqrt_dt, w, sign, prev, next, var);
  const Real mean = a.jump_intensity * dt, p0 = std::exp(-mean);
  const Real jump_mean = a.jump_mean, jump_vol = a.jump_vol;
  Real u[kBatch], p[kBatch], cdf[kBatch], count[kBatch], jump[kBatch];
  // normal_cdf_r(z) = erfc(-z / sqrt 2) / 2.
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) u[l] = Real(0.5) * vmath::erfc(-(sign * e[l]) * Real(0.70710678118654752440));
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    p[l] = p0;
    cdf[l] = p0;
    count[l] = Real(0);
  }
  for (int n = 1; n <= 64; ++n) {
    const Real step = mean / static_cast<Real>(n);
    int active = 0;
#pragma omp simd reduction(+ : active)
    for (int l = 0; l < kBatch; ++l) {
      const bool more = u[l] > cdf[l];
      const Real pn = p[l] * step;
      p[l] = more ? pn : p[l];
      cdf[l] = more ? cdf[l] + pn : cdf[l];
      count[l] = more ? static_cast<Real>(n) : count[l];
      active += more ? 1 : 0;
    }
    if (active == 0) break;
  }
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) jump[l] = count[l] * jump_mean + jump_vol * std::sqrt(count[l]) * (sign * j[l]);
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) next[l] = count[l] > Real(0) ? next[l] + jump[l] : next[l];
}

// Full-truncation log-Euler.
template <int kBatch, class Real>
inline void heston_ft_step_batch(const AssetStep<Real>& a, Real dt, Real sqrt_dt, const Real* w, const Real* e,
                                 Real sign, const Real* prev, Real* next, Real* v, Real* var) {
  const Real c = std::sqrt(Real(1) - a.rho * a.rho);
  // The asset's fields in locals: stores through v or next could alias
  // them, and reloading them stops the vectoriser.
  const Real rho = a.rho, carry = a.carry, kappa = a.kappa, theta = a.theta, xi = a.xi;
  Real positive[kBatch], root[kBatch];
  // Its own loops: a select next to sqrt would become a branch.
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) positive[l] = v[l] > Real(0) ? v[l] : Real(0);
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) root[l] = std::sqrt(positive[l]);
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    const Real wl = sign * w[l];
    const Real zv = rho * wl + c * (sign * e[l]);
    const Real vp = positive[l];
    const Real sv = root[l];
    next[l] = prev[l] + ((carry - Real(0.5) * vp) * dt + sv * sqrt_dt * wl);
    v[l] += kappa * (theta - vp) * dt + xi * sv * sqrt_dt * zv;
    var[l] = vp * dt;
  }
}

// Andersen's QE: both branches in every lane, then a select; the vector
// calls (erfc, log) in loops of their own, where g++ keeps a select next
// to a call from becoming a branch that stops the vectoriser.
template <int kBatch, class Real>
inline void heston_qe_step_batch(const AssetStep<Real>& a, Real dt, const Real* w, const Real* e, Real sign,
                                 const Real* prev, Real* next, Real* v, Real* var) {
  const Real c = std::sqrt(Real(1) - a.rho * a.rho);
  const Real ek = std::exp(-a.kappa * dt);
  Real zv[kBatch], zp[kBatch], m[kBatch], psi[kBatch], quad[kBatch], p[kBatch], tail[kBatch], lg[kBatch];
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    const Real wl = sign * w[l], el = sign * e[l];
    zv[l] = a.rho * wl + c * el;
    zp[l] = c * wl - a.rho * el;
    m[l] = a.theta + (v[l] - a.theta) * ek;
    const Real s2 = v[l] * a.xi * a.xi * ek * (Real(1) - ek) / a.kappa +
                    a.theta * a.xi * a.xi * (Real(1) - ek) * (Real(1) - ek) / (Real(2) * a.kappa);
    psi[l] = s2 / (m[l] * m[l]);
    // psi <= 1.5: a scaled noncentral chi-square by moment matching (NaN
    // where psi > 2, and not selected there).
    const Real inv = Real(2) / psi[l];
    const Real b2 = inv - Real(1) + std::sqrt(inv) * std::sqrt(inv - Real(1));
    const Real t = std::sqrt(b2) + zv[l];
    quad[l] = m[l] / (Real(1) + b2) * t * t;
    p[l] = (psi[l] - Real(1)) / (psi[l] + Real(1));
  }
  // 1 - U = Phi(-zv) = erfc(zv / sqrt 2) / 2 (normal_cdf_r).
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) tail[l] = Real(0.5) * vmath::erfc(zv[l] * Real(0.70710678118654752440));
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) lg[l] = vmath::log((Real(1) - p[l]) / tail[l]);
  const Real k0 = -a.rho * a.kappa * a.theta * dt / a.xi;
  const Real g = a.kappa * a.rho / a.xi - Real(0.5);
  const Real k1 = Real(0.5) * dt * g - a.rho / a.xi;
  const Real k2 = Real(0.5) * dt * g + a.rho / a.xi;
  const Real k3 = Real(0.5) * dt * (Real(1) - a.rho * a.rho);
  // psi > 1.5: a point mass at 0 and an exponential tail, inverted at U:
  // log((1 - p) / (1 - U)) / beta, or 0. The division in a loop of its
  // own, never under a select (which g++ would make a branch).
  Real next_v[kBatch];
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    const Real beta = (Real(1) - p[l]) / m[l];
    next_v[l] = (tail[l] >= Real(1) - p[l] ? Real(0) : lg[l]) / beta;
  }
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) next_v[l] = psi[l] <= Real(1.5) ? quad[l] : next_v[l];
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    const Real vn = next_v[l];
    const Real vl = v[l];
    next[l] = prev[l] + (a.carry * dt + k0 + k1 * vl + k2 * vn + std::sqrt(k3 * (vl + vn)) * zp[l]);
    var[l] = Real(0.5) * (vl + vn) * dt;
    v[l] = vn;
  }
}

}  // namespace strata::kernels::pricing
