// Pathwise derivatives of payoffs that are Lipschitz in the path (european,
// asian, basket, lookback): d payoff / d theta = sum_k (d payoff / d x_k)
// (d x_k / d theta), exact where the payoff is differentiable, which is
// almost every path (Glasserman, "Monte Carlo Methods in Financial
// Engineering", sec. 7.2). The tangent d x_k / d theta of the log path:
//   spot S0 of asset a: 1 / S0 at every k (x_k = ln S0 + terms free of S0,
//     under GBM, Heston and Merton alike);
//   vol sigma of a GBM asset: x_k = x_0 + (b - sigma^2/2) t_k + sigma W(t_k),
//     so d x_k / d sigma = W(t_k) - sigma t_k = (x_k - x_0 - (b + sigma^2/2) t_k) / sigma.
// For payoffs that are not (digital), the likelihood ratio instead: the
// path's density depends on S0 only through its first step, x_1 ~
// N(x_0 + (b - sigma^2/2) t_1, sigma^2 t_1) under GBM, so
//   d E[f] / d S0 = E[f Z_1 / (S0 sigma sqrt(t_1))],  Z_1 = the step's normal
// (Glasserman sec. 7.3; Broadie and Glasserman, Management Sci. 42 (1996)).
#pragma once

#include <cmath>

#include "kernels/core/hd.hpp"
#include "kernels/pricing/payoffs.hpp"

namespace strata::kernels::pricing {

template <class Real>
struct PathTangent {
  int asset;            // the group's asset theta belongs to
  bool vol;             // theta = its vol (GBM), else its spot
  bool score;           // likelihood ratio (spot of a GBM asset) instead of the pathwise derivative
  double inv_spot;      // 1 / S0
  double carry_plus;    // b + sigma^2 / 2
  double sigma;

  // The same tangent for paths in another precision.
  template <class To>
  STRATA_HD PathTangent<To> as() const {
    return {.asset = asset, .vol = vol, .score = score, .inv_spot = inv_spot, .carry_plus = carry_plus, .sigma = sigma};
  }
};

// d x(k, a) / d theta; times[k - 1] = t_k.
template <class Real>
STRATA_HD inline double tangent_at(const PathTangent<Real>& d, const PathView<Real>& v, const Real* times, int k,
                                   int a) {
  if (a != d.asset) return 0.0;
  if (!d.vol) return d.inv_spot;
  if (k == 0) return 0.0;
  return (static_cast<double>(v.at(k, a)) - static_cast<double>(v.at(0, a)) -
          d.carry_plus * static_cast<double>(times[k - 1])) / d.sigma;
}

// d/d theta of the discounted payoff of p on path v (european, asian,
// basket, lookback; 0 for others, which take bumps).
template <class Real>
STRATA_HD inline double pathwise_payoff(const PayoffSpec<Real>& p, const PathView<Real>& v, const Real* times,
                                        const PathTangent<Real>& d) {
  if (d.score) {
    const double sd = d.sigma * std::sqrt(static_cast<double>(times[0]));
    const double z1 = (static_cast<double>(v.at(1, d.asset)) - static_cast<double>(v.at(0, d.asset)) -
                       (d.carry_plus - d.sigma * d.sigma) * static_cast<double>(times[0])) / sd;
    return path_payoff(p, v) * z1 * d.inv_spot / sd;
  }
  const double sign = p.call ? 1.0 : -1.0;
  const int n = v.steps;
  switch (p.kind) {
    case PayoffKind::european: {
      const double st = std::exp(static_cast<double>(v.at(n, p.asset)));
      const bool itm = p.call ? st > static_cast<double>(p.strike) : st < static_cast<double>(p.strike);
      return itm ? p.discount * sign * st * tangent_at(d, v, times, n, p.asset) : 0.0;
    }
    case PayoffKind::asian: {
      double sum = 0.0, dsum = 0.0;
      for (int f = 0; f < p.fixings; ++f) {
        const int k = v.fix_steps[p.fix_begin + f];
        const double xk = static_cast<double>(v.at(k, p.asset)), dx = tangent_at(d, v, times, k, p.asset);
        sum += p.geometric ? xk : std::exp(xk);
        dsum += p.geometric ? dx : std::exp(xk) * dx;
      }
      const double mean = sum / p.fixings;
      const double avg = p.geometric ? std::exp(mean) : mean;
      const double davg = p.geometric ? avg * dsum / p.fixings : dsum / p.fixings;
      const bool itm = p.call ? avg > static_cast<double>(p.strike) : avg < static_cast<double>(p.strike);
      return itm ? p.discount * sign * davg : 0.0;
    }
    case PayoffKind::basket: {
      double b = 0.0, db = 0.0;
      if (p.basket == BasketKind::average) {
        for (int a = 0; a < v.assets; ++a) {
          const double w = static_cast<double>(v.weights[p.weight_begin + a]);
          const double xa = static_cast<double>(v.at(n, a)), dx = tangent_at(d, v, times, n, a);
          b += w * (p.geometric ? xa : std::exp(xa));
          db += w * (p.geometric ? dx : std::exp(xa) * dx);
        }
        if (p.geometric) {
          b = std::exp(b);
          db *= b;
        }
      } else {
        int pick = 0;
        for (int a = 1; a < v.assets; ++a) {
          const bool better = p.basket == BasketKind::max ? v.at(n, a) > v.at(n, pick) : v.at(n, a) < v.at(n, pick);
          if (better) pick = a;
        }
        b = std::exp(static_cast<double>(v.at(n, pick)));
        db = b * tangent_at(d, v, times, n, pick);
      }
      const bool itm = p.call ? b > static_cast<double>(p.strike) : b < static_cast<double>(p.strike);
      return itm ? p.discount * sign * db : 0.0;
    }
    case PayoffKind::lookback: {
      // The extremes' dates, as lookback_value finds them; the BGK shift
      // beta sigma sqrt(dt) moves with sigma: d shift / d sigma = shift / sigma.
      int k_hi = 0, k_lo = 0;
      const int m = p.continuous ? n : p.fixings;
      for (int j = 1; j <= m; ++j) {
        const int k = p.continuous ? j : v.fix_steps[p.fix_begin + j - 1];
        if (v.at(k, p.asset) > v.at(k_hi, p.asset)) k_hi = k;
        if (v.at(k, p.asset) < v.at(k_lo, p.asset)) k_lo = k;
      }
      const double shift = static_cast<double>(p.lookback_shift);
      const double dshift = d.vol && d.asset == p.asset ? shift / d.sigma : 0.0;
      const double max_s = std::exp(static_cast<double>(v.at(k_hi, p.asset)) + shift);
      const double min_s = std::exp(static_cast<double>(v.at(k_lo, p.asset)) - shift);
      const double dmax = max_s * (tangent_at(d, v, times, k_hi, p.asset) + dshift);
      const double dmin = min_s * (tangent_at(d, v, times, k_lo, p.asset) - dshift);
      if (p.floating) {
        const double st = std::exp(static_cast<double>(v.at(n, p.asset)));
        const double dst = st * tangent_at(d, v, times, n, p.asset);
        return p.discount * (p.call ? dst - dmin : dmax - dst);
      }
      if (p.call) return max_s > static_cast<double>(p.strike) ? p.discount * dmax : 0.0;
      return static_cast<double>(p.strike) > min_s ? -p.discount * dmin : 0.0;
    }
    default:
      return 0.0;
  }
}

}  // namespace strata::kernels::pricing
