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
// Math (rng::ScalarMath, rng::LaneMath): step_asset composes them for one
// path, and the host's batched kernel (path_group_batched.hpp) runs them in
// `omp simd` loops over lanes. A step's constants are computed once, in libm.
#pragma once

#include <cmath>

#include "kernels/core/hd.hpp"
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

// Standard normal CDF in Real arithmetic (a uniform from a normal draw).
template <class Real, class Math = rng::ScalarMath>
STRATA_HD inline Real normal_cdf_r(Real z) { return Real(0.5) * Math::erfc(-z * Real(0.70710678118654752440)); }

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

// Poisson(mean) by inversion, capped at 64 events (far in the tail for any
// mean per step a grid allows).
template <class Real>
STRATA_HD inline Real poisson_count(Real mean, Real u) {
  Real p = std::exp(-mean), cdf = p, count = Real(0);
  for (int n = 1; n <= 64 && poisson_term(u, mean / static_cast<Real>(n), static_cast<Real>(n), p, cdf, count); ++n) {
  }
  return count;
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
  STRATA_HD static Real tail(Real zv) { return normal_cdf_r<Real, Math>(-zv); }
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

// Advances (x, v) of one asset over dt; returns the variance of x's
// diffusion over the step (for the Brownian-bridge barrier correction).
// `draw` yields the path's next normal.
template <class Real, class Draw>
STRATA_HD inline Real step_asset(const AssetStep<Real>& a, Real dt, Real sqrt_dt, Real w, Real& x, Real& v,
                                 Draw& draw) {
  switch (a.model) {
    case AssetModel::gbm:
      return gbm_step(a, dt, sqrt_dt, w, x);
    case AssetModel::merton: {
      const Real var = gbm_step(a, dt, sqrt_dt, w, x);
      const Real u = normal_cdf_r(draw());
      const Real zj = draw();
      const Real n = poisson_count(a.jump_intensity * dt, u);
      if (n > Real(0)) x += merton_jumps(a, n, zj);
      return var;
    }
    case AssetModel::heston_full_truncation: {
      const Real vp = truncated(v);
      return heston_ft_step(a, std::sqrt(Real(1) - a.rho * a.rho), dt, sqrt_dt, w, draw(), vp, std::sqrt(vp), x, v);
    }
    case AssetModel::heston_qe: {
      using Qe = HestonQe<Real>;
      const Qe q(a, dt);
      Real zv, zp;
      q.normals(w, draw(), zv, zp);
      const Real m = q.mean(v), psi = q.psi(v, m);
      Real vn;
      if (psi <= Real(1.5)) {
        vn = Qe::quadratic(m, psi, zv);
      } else {
        const Real p = Qe::point_mass(psi), tail = Qe::template tail<rng::ScalarMath>(zv);
        vn = Qe::exponential(m, p, tail, std::log(Qe::ratio(p, tail)));
      }
      return q.advance(vn, zp, x, v);
    }
  }
  return Real(0);
}

}  // namespace strata::kernels::pricing
