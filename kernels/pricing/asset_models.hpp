// One time step of each asset model, in log price x = ln S:
//
// gbm:     x += (mu - sigma^2/2) dt + sigma sqrt(dt) W                  (exact)
// merton:  the same with mu - lambda k, plus N ~ Poisson(lambda dt) jumps,
//          whose sum is N m + delta sqrt(N) Z_J (log-normal jumps, exact;
//          Merton, J. Financial Economics 3 (1976) 125-144),
//          k = exp(m + delta^2/2) - 1
// heston:  dv = kappa (theta - v) dt + xi sqrt(v) dW_v, d<W, W_v> = rho dt,
//          either full-truncation log-Euler (Lord, Koekkoek and van Dijk,
//          Quant. Finance 10 (2010)) or Andersen's quadratic-exponential
//          scheme with gamma1 = gamma2 = 1/2 (Andersen, J. Comput. Finance
//          11 (2008), eqs. 23-33, without the martingale correction).
//
// W is the asset's Brownian increment over the step in units of sqrt(dt)
// (already correlated with the other assets'); the model's own draws (the
// variance's independent part, a jump count's uniform, the jump sizes)
// come from the path's normal stream after the assets' W.
//
// Each formula is written once, per lane, on Real and the transcendentals'
// Math (rng::ScalarMath, rng::LaneMath), and composed once for W lanes
// (step_lanes): one on the device, a batch of `omp simd` lanes on the host
// (PathGroupKernel::run). A step's constants are computed once, in libm.
#pragma once

#include <cmath>

#include "kernels/core/hd.hpp"
#include "kernels/pricing/black_scholes.hpp"
#include "kernels/rng/normal.hpp"

namespace strata::kernels::pricing {

enum class AssetModel : int { gbm, heston_qe, heston_full_truncation, merton };

template <class Real>
struct AssetStep {
  AssetModel model;
  Real log_spot;
  Real carry;                    // r - q (merton: r - q - lambda k)
  Real vol;                      // gbm, merton
  Real v0, kappa, theta, xi, rho;
  Real jump_intensity, jump_mean, jump_vol;

  // The same step in another precision.
  template <class To>
  STRATA_HD AssetStep<To> as() const {
    return {.model = model, .log_spot = To(log_spot), .carry = To(carry), .vol = To(vol), .v0 = To(v0),
            .kappa = To(kappa), .theta = To(theta), .xi = To(xi), .rho = To(rho),
            .jump_intensity = To(jump_intensity), .jump_mean = To(jump_mean), .jump_vol = To(jump_vol)};
  }
};

// GBM (and Merton's diffusion): advances x by W; returns the step variance.
template <class Real>
STRATA_HD inline Real gbm_step(const AssetStep<Real>& a, Real dt, Real sqrt_dt, Real w, Real& x) {
  x += (a.carry - Real(0.5) * a.vol * a.vol) * dt + a.vol * sqrt_dt * w;
  return a.vol * a.vol * dt;
}

// Term n >= 1 of the inversion of Poisson(mean) at the uniform u: while u
// lies beyond the cdf so far, P(N = n) = P(N = n - 1) mean / n joins it and
// the count becomes n. Returns whether it did.
template <class Real>
STRATA_HD inline bool poisson_term(Real u, Real mean_over_n, Real n, Real& p, Real& cdf, Real& count) {
  const bool more = u > cdf;
  const Real pn = p * mean_over_n;
  p = more ? pn : p;
  cdf = more ? cdf + pn : cdf;
  count = more ? n : count;
  return more;
}

// The sum of `count` log-normal jumps, zj its normal.
template <class Real>
STRATA_HD inline Real merton_jumps(const AssetStep<Real>& a, Real count, Real zj) {
  return count * a.jump_mean + a.jump_vol * std::sqrt(count) * zj;
}

// Full-truncation log-Euler from vp = max(v, 0) and its root; c =
// sqrt(1 - rho^2), e the variance's own normal. Returns the step variance.
template <class Real>
STRATA_HD inline Real truncated(Real v) { return v > Real(0) ? v : Real(0); }
template <class Real>
STRATA_HD inline Real heston_ft_step(const AssetStep<Real>& a, Real c, Real dt, Real sqrt_dt, Real w, Real e,
                                     Real vp, Real root, Real& x, Real& v) {
  const Real zv = a.rho * w + c * e;
  x += (a.carry - Real(0.5) * vp) * dt + root * sqrt_dt * w;
  v += a.kappa * (a.theta - vp) * dt + a.xi * root * sqrt_dt * zv;
  return vp * dt;
}

// Andersen's QE over one step of one asset: the step's constants, then the
// per-lane pieces in the order a step uses them.
template <class Real>
struct HestonQe {
  Real rho, kappa, theta, xi, carry_dt, dt;
  Real c, ek;             // sqrt(1 - rho^2), exp(-kappa dt)
  Real k0, k1, k2, k3;    // Andersen's eq. 33, gamma1 = gamma2 = 1/2

  STRATA_HD HestonQe(const AssetStep<Real>& a, Real h)
      : rho(a.rho), kappa(a.kappa), theta(a.theta), xi(a.xi), carry_dt(a.carry * h), dt(h),
        c(std::sqrt(Real(1) - a.rho * a.rho)), ek(std::exp(-a.kappa * h)), k0(-a.rho * a.kappa * a.theta * h / a.xi),
        k1(Real(0.5) * h * (a.kappa * a.rho / a.xi - Real(0.5)) - a.rho / a.xi),
        k2(Real(0.5) * h * (a.kappa * a.rho / a.xi - Real(0.5)) + a.rho / a.xi),
        k3(Real(0.5) * h * (Real(1) - a.rho * a.rho)) {}

  // The variance's normal Zv and W's independent part Zp: W = rho Zv + c Zp.
  STRATA_HD void normals(Real w, Real e, Real& zv, Real& zp) const {
    zv = rho * w + c * e;
    zp = c * w - rho * e;
  }
  // The next variance's conditional mean m and psi = s^2 / m^2.
  STRATA_HD Real mean(Real v) const { return theta + (v - theta) * ek; }
  STRATA_HD Real psi(Real v, Real m) const {
    const Real s2 = v * xi * xi * ek * (Real(1) - ek) / kappa +
                    theta * xi * xi * (Real(1) - ek) * (Real(1) - ek) / (Real(2) * kappa);
    return s2 / (m * m);
  }
  // psi <= 1.5: a scaled noncentral chi-square by moment matching (NaN where psi > 2).
  STRATA_HD static Real quadratic(Real m, Real psi, Real zv) {
    const Real inv = Real(2) / psi;
    const Real b2 = inv - Real(1) + std::sqrt(inv) * std::sqrt(inv - Real(1));
    const Real t = std::sqrt(b2) + zv;
    return m / (Real(1) + b2) * t * t;
  }
  // psi > 1.5: a point mass p at 0 and an exponential tail of rate
  // beta = (1 - p) / m, inverted at U = Phi(zv): tail = 1 - U as Phi(-zv),
  // accurate where the large variances are (1 - U in fp32 would be 0
  // there), lg = log(ratio(p, tail)).
  STRATA_HD static Real point_mass(Real psi) { return (psi - Real(1)) / (psi + Real(1)); }
  template <class Math>
  STRATA_HD static Real tail(Real zv) { return normal_cdf<Real, Math>(-zv); }
  STRATA_HD static Real ratio(Real p, Real tail) { return (Real(1) - p) / tail; }
  STRATA_HD static Real exponential(Real m, Real p, Real tail, Real lg) {
    return (tail >= Real(1) - p ? Real(0) : lg) / ((Real(1) - p) / m);
  }
  // x over the step from v to vn; v becomes vn. Returns the step variance.
  STRATA_HD Real advance(Real vn, Real zp, Real& x, Real& v) const {
    x += carry_dt + k0 + k1 * v + k2 * vn + std::sqrt(k3 * (v + vn)) * zp;
    const Real var = Real(0.5) * (v + vn) * dt;
    v = vn;
    return var;
  }
};

// The steps of W lanes (one on a GPU thread, a batch on the host), in
// loops over the lanes that the host runs under `omp simd` with Math =
// rng::LaneMath (libmvec). prev/next are the lanes' log prices before and
// after the step, w their (correlated) Brownian increments and e, j the
// model's own normals, all times `sign` (-1: the antithetic path); var gets
// the step variance, v (Heston) is updated in place. The asset is read from
// a local copy (stores through next or v could alias the caller's, and
// reloads stop the vectoriser); a vector call (erfc, log), and a select next
// to one, run in loops of their own (g++ would make the select a branch
// that stops the vectoriser).
template <int W, class Math, class Real>
STRATA_HD inline void gbm_lanes(const AssetStep<Real>& asset, Real dt, Real sqrt_dt, const Real* w, Real sign,
                                const Real* prev, Real* next, Real* var) {
  const AssetStep<Real> a = asset;
  STRATA_LANES()
  for (int l = 0; l < W; ++l) {
    Real x = prev[l];
    var[l] = gbm_step(a, dt, sqrt_dt, sign * w[l], x);
    next[l] = x;
  }
}

// Merton: Poisson(mean) by inversion, capped at 64 events (far in the tail
// for any mean per step a grid allows), runs in every lane until none is
// still below its uniform: each lane takes the terms its own inversion would.
template <int W, class Math, class Real>
STRATA_HD inline void merton_lanes(const AssetStep<Real>& asset, Real dt, Real sqrt_dt, const Real* w, const Real* e,
                                   const Real* j, Real sign, const Real* prev, Real* next, Real* var) {
  const AssetStep<Real> a = asset;
  gbm_lanes<W, Math>(a, dt, sqrt_dt, w, sign, prev, next, var);
  const Real mean = a.jump_intensity * dt, p0 = std::exp(-mean);
  Real u[W], p[W], cdf[W], count[W], jump[W];
  STRATA_LANES()
  for (int l = 0; l < W; ++l) u[l] = normal_cdf<Real, Math>(sign * e[l]);
  STRATA_LANES()
  for (int l = 0; l < W; ++l) { p[l] = cdf[l] = p0; count[l] = Real(0); }
  for (int n = 1; n <= 64; ++n) {
    const Real mean_over_n = mean / static_cast<Real>(n), rn = static_cast<Real>(n);
    int active = 0;
    STRATA_LANES(reduction(+ : active))
    for (int l = 0; l < W; ++l) active += poisson_term(u[l], mean_over_n, rn, p[l], cdf[l], count[l]) ? 1 : 0;
    if (active == 0) break;
  }
  STRATA_LANES()
  for (int l = 0; l < W; ++l) jump[l] = merton_jumps(a, count[l], sign * j[l]);
  STRATA_LANES()
  for (int l = 0; l < W; ++l) next[l] = count[l] > Real(0) ? next[l] + jump[l] : next[l];
}

template <int W, class Math, class Real>
STRATA_HD inline void heston_ft_lanes(const AssetStep<Real>& asset, Real dt, Real sqrt_dt, const Real* w,
                                      const Real* e, Real sign, const Real* prev, Real* next, Real* v, Real* var) {
  const AssetStep<Real> a = asset;
  const Real c = std::sqrt(Real(1) - a.rho * a.rho);
  Real positive[W], root[W];
  STRATA_LANES()
  for (int l = 0; l < W; ++l) positive[l] = truncated(v[l]);
  STRATA_LANES()
  for (int l = 0; l < W; ++l) root[l] = std::sqrt(positive[l]);
  STRATA_LANES()
  for (int l = 0; l < W; ++l) {
    Real x = prev[l];
    var[l] = heston_ft_step(a, c, dt, sqrt_dt, sign * w[l], sign * e[l], positive[l], root[l], x, v[l]);
    next[l] = x;
  }
}

// Andersen's QE: each branch in every lane where any lane takes it (one
// lane: only its own), then a select.
template <int W, class Math, class Real>
STRATA_HD inline void heston_qe_lanes(const AssetStep<Real>& a, Real dt, const Real* w, const Real* e, Real sign,
                                      const Real* prev, Real* next, Real* v, Real* var) {
  using Qe = HestonQe<Real>;
  const Qe q(a, dt);
  Real zv[W], zp[W], m[W], psi[W], quad[W], p[W], tail[W], lg[W], next_v[W];
  int quadratic = 0;
  STRATA_LANES(reduction(+ : quadratic))
  for (int l = 0; l < W; ++l) {
    q.normals(sign * w[l], sign * e[l], zv[l], zp[l]);
    m[l] = q.mean(v[l]);
    psi[l] = q.psi(v[l], m[l]);
    p[l] = Qe::point_mass(psi[l]);
    quad[l] = next_v[l] = Real(0);
    quadratic += psi[l] <= Real(1.5) ? 1 : 0;
  }
  if (quadratic > 0) {
    STRATA_LANES()
    for (int l = 0; l < W; ++l) quad[l] = Qe::quadratic(m[l], psi[l], zv[l]);
  }
  if (quadratic < W) {
    STRATA_LANES()
    for (int l = 0; l < W; ++l) tail[l] = Qe::template tail<Math>(zv[l]);
    STRATA_LANES()
    for (int l = 0; l < W; ++l) lg[l] = Math::log(Qe::ratio(p[l], tail[l]));
    STRATA_LANES()
    for (int l = 0; l < W; ++l) next_v[l] = Qe::exponential(m[l], p[l], tail[l], lg[l]);
  }
  STRATA_LANES()
  for (int l = 0; l < W; ++l) next_v[l] = psi[l] <= Real(1.5) ? quad[l] : next_v[l];
  STRATA_LANES()
  for (int l = 0; l < W; ++l) {
    Real x = prev[l];
    var[l] = q.advance(next_v[l], zp[l], x, v[l]);
    next[l] = x;
  }
}

// One step of one asset for W lanes; own0/own1 are the model's own normals
// (Heston one, Merton two).
template <int W, class Math, class Real>
STRATA_HD inline void step_lanes(const AssetStep<Real>& a, Real dt, Real sqrt_dt, const Real* w, const Real* own0,
                                 const Real* own1, Real sign, const Real* prev, Real* next, Real* v, Real* var) {
  switch (a.model) {
    case AssetModel::heston_qe:
      return heston_qe_lanes<W, Math>(a, dt, w, own0, sign, prev, next, v, var);
    case AssetModel::heston_full_truncation:
      return heston_ft_lanes<W, Math>(a, dt, sqrt_dt, w, own0, sign, prev, next, v, var);
    case AssetModel::merton:
      return merton_lanes<W, Math>(a, dt, sqrt_dt, w, own0, own1, sign, prev, next, var);
    case AssetModel::gbm:
      return gbm_lanes<W, Math>(a, dt, sqrt_dt, w, sign, prev, next, var);
  }
}

}  // namespace strata::kernels::pricing
