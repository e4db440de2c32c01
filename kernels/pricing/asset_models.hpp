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
#pragma once

#include <cmath>

#include "kernels/core/hd.hpp"

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
};

// Standard normal CDF in Real arithmetic (a uniform from a normal draw).
template <class Real>
STRATA_HD inline Real normal_cdf_r(Real z) {
  return Real(0.5) * std::erfc(-z * Real(0.70710678118654752440));
}

// Poisson(mean) by inversion of the uniform u, capped at 64 events (far in
// the tail for any mean per step a grid allows).
template <class Real>
STRATA_HD inline int poisson_count(Real mean, Real u) {
  Real p = std::exp(-mean), cdf = p;
  int n = 0;
  while (u > cdf && n < 64) {
    ++n;
    p *= mean / static_cast<Real>(n);
    cdf += p;
  }
  return n;
}

// Advances (x, v) of one asset over dt; returns the variance of x's
// diffusion over the step (for the Brownian-bridge barrier correction).
// `draw` yields the path's next normal.
template <class Real, class Draw>
STRATA_HD inline Real step_asset(const AssetStep<Real>& a, Real dt, Real sqrt_dt, Real w, Real& x, Real& v,
                                 Draw& draw) {
  switch (a.model) {
    case AssetModel::gbm: {
      x += (a.carry - Real(0.5) * a.vol * a.vol) * dt + a.vol * sqrt_dt * w;
      return a.vol * a.vol * dt;
    }
    case AssetModel::merton: {
      x += (a.carry - Real(0.5) * a.vol * a.vol) * dt + a.vol * sqrt_dt * w;
      const Real u = normal_cdf_r(draw());
      const Real zj = draw();
      const int n = poisson_count(a.jump_intensity * dt, u);
      if (n > 0) x += static_cast<Real>(n) * a.jump_mean + a.jump_vol * std::sqrt(static_cast<Real>(n)) * zj;
      return a.vol * a.vol * dt;
    }
    case AssetModel::heston_full_truncation: {
      const Real e = draw();
      const Real zv = a.rho * w + std::sqrt(Real(1) - a.rho * a.rho) * e;
      const Real vp = v > Real(0) ? v : Real(0);
      x += (a.carry - Real(0.5) * vp) * dt + std::sqrt(vp) * sqrt_dt * w;
      v += a.kappa * (a.theta - vp) * dt + a.xi * std::sqrt(vp) * sqrt_dt * zv;
      return vp * dt;
    }
    case AssetModel::heston_qe: {
      // The variance's normal Zv and the independent part Zp of W:
      // W = rho Zv + sqrt(1 - rho^2) Zp.
      const Real e = draw();
      const Real c = std::sqrt(Real(1) - a.rho * a.rho);
      const Real zv = a.rho * w + c * e;
      const Real zp = c * w - a.rho * e;
      const Real ek = std::exp(-a.kappa * dt);
      const Real m = a.theta + (v - a.theta) * ek;
      const Real s2 = v * a.xi * a.xi * ek * (Real(1) - ek) / a.kappa +
                      a.theta * a.xi * a.xi * (Real(1) - ek) * (Real(1) - ek) / (Real(2) * a.kappa);
      const Real psi = s2 / (m * m);
      Real vn;
      if (psi <= Real(1.5)) {
        const Real inv = Real(2) / psi;
        const Real b2 = inv - Real(1) + std::sqrt(inv) * std::sqrt(inv - Real(1));
        const Real am = m / (Real(1) + b2);
        const Real t = std::sqrt(b2) + zv;
        vn = am * t * t;
      } else {
        const Real p = (psi - Real(1)) / (psi + Real(1));
        const Real beta = (Real(1) - p) / m;
        // U = Phi(zv); 1 - U computed as Phi(-zv), accurate in the tail
        // that sets the large variances (1 - U in fp32 would be 0 there).
        const Real tail = normal_cdf_r(-zv);
        vn = tail >= Real(1) - p ? Real(0) : std::log((Real(1) - p) / tail) / beta;
      }
      const Real k0 = -a.rho * a.kappa * a.theta * dt / a.xi;
      const Real g = a.kappa * a.rho / a.xi - Real(0.5);
      const Real k1 = Real(0.5) * dt * g - a.rho / a.xi;
      const Real k2 = Real(0.5) * dt * g + a.rho / a.xi;
      const Real k3 = Real(0.5) * dt * (Real(1) - a.rho * a.rho);
      const Real var = k3 * (v + vn);
      x += a.carry * dt + k0 + k1 * v + k2 * vn + std::sqrt(var) * zp;
      const Real vbar = Real(0.5) * (v + vn);
      v = vn;
      return vbar * dt;
    }
  }
  return Real(0);
}

}  // namespace strata::kernels::pricing
