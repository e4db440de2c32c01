// Closed-form prices the path-dependent Monte Carlo estimates are checked
// against, all under GBM with continuous dividend yield q, cost of carry
// b = r - q. Formulas as printed in Haug, "The Complete Guide to Option
// Pricing Formulas", 2nd ed. (2007), with their original sources.
#pragma once

#include <cmath>

#include "kernels/core/hd.hpp"
#include "kernels/pricing/black_scholes.hpp"

namespace strata::kernels {

// Broadie-Glasserman-Kou constant beta = -zeta(1/2) / sqrt(2 pi) (Broadie,
// Glasserman and Kou, "A continuity correction for discrete barrier
// options", Math. Finance 7 (1997) 325-349).
inline constexpr double kBgkBeta = 0.5825971579390106;

// Cash-or-nothing digital paying `cash` when S_T > K (call) or S_T < K (put)
// (Reiner and Rubinstein 1991; Haug sec. 4.19.2): cash e^{-rT} N(+-d2).
STRATA_HD inline double digital_cash(bool call, double spot, double strike, double rate, double dividend,
                                     double vol, double maturity, double cash) {
  const double sd = vol * sqrt(maturity);
  const double d2 = (log(spot / strike) + (rate - dividend - 0.5 * vol * vol) * maturity) / sd;
  return cash * exp(-rate * maturity) * normal_cdf(call ? d2 : -d2);
}

// Geometric average of n fixings at T/n, 2T/n, ..., T. ln G is normal with
//   mean = ln S + (r - q - sigma^2/2) T (n+1)/(2n),
//   var  = sigma^2 T (n+1)(2n+1)/(6 n^2)
// (Kemna and Vorst 1990 for n -> infinity; the discrete sums e.g. in
// Glasserman, "Monte Carlo Methods in Financial Engineering", sec. 4.1.2).
STRATA_HD inline double geometric_asian(bool call, double spot, double strike, double rate, double dividend,
                                        double vol, double maturity, int fixings) {
  const double n = fixings;
  const double mean = log(spot) + (rate - dividend - 0.5 * vol * vol) * maturity * (n + 1.0) / (2.0 * n);
  const double sd = vol * sqrt(maturity * (n + 1.0) * (2.0 * n + 1.0) / (6.0 * n * n));
  const double d2 = (mean - log(strike)) / sd;
  const double d1 = d2 + sd;
  const double fwd = exp(mean + 0.5 * sd * sd);
  const double df = exp(-rate * maturity);
  return call ? df * (fwd * normal_cdf(d1) - strike * normal_cdf(d2))
              : df * (strike * normal_cdf(-d2) - fwd * normal_cdf(-d1));
}

// Continuously monitored single barrier with rebate (Reiner and Rubinstein,
// "Breaking down the barriers", Risk 4 (1991); Haug sec. 4.17.1, terms A-F).
// The knock-out rebate is paid when the barrier is hit, the knock-in
// rebate at maturity if it never is.
STRATA_HD inline double barrier_option(bool call, bool up, bool knock_in, double spot, double strike,
                                       double barrier, double rebate, double rate, double dividend, double vol,
                                       double maturity) {
  const double b = rate - dividend;
  const double h = barrier, s = spot, x = strike, t = maturity;
  if ((up && s >= h) || (!up && s <= h)) {
    // Already hit: an out option is its rebate now, an in option is vanilla.
    return knock_in ? black_scholes(call, s, x, rate, dividend, vol, t) : rebate;
  }
  const double phi = call ? 1.0 : -1.0, eta = up ? -1.0 : 1.0;
  const double sd = vol * sqrt(t);
  const double mu = (b - 0.5 * vol * vol) / (vol * vol);
  const double lambda = sqrt(mu * mu + 2.0 * rate / (vol * vol));
  const double x1 = log(s / x) / sd + (1.0 + mu) * sd;
  const double x2 = log(s / h) / sd + (1.0 + mu) * sd;
  const double y1 = log(h * h / (s * x)) / sd + (1.0 + mu) * sd;
  const double y2 = log(h / s) / sd + (1.0 + mu) * sd;
  const double z = log(h / s) / sd + lambda * sd;
  const double carry = exp((b - rate) * t), df = exp(-rate * t);
  const double hs2mu = pow(h / s, 2.0 * mu), hs2mu1 = pow(h / s, 2.0 * (mu + 1.0));
  const double A = phi * s * carry * normal_cdf(phi * x1) - phi * x * df * normal_cdf(phi * x1 - phi * sd);
  const double B = phi * s * carry * normal_cdf(phi * x2) - phi * x * df * normal_cdf(phi * x2 - phi * sd);
  const double C = phi * s * carry * hs2mu1 * normal_cdf(eta * y1) - phi * x * df * hs2mu * normal_cdf(eta * y1 - eta * sd);
  const double D = phi * s * carry * hs2mu1 * normal_cdf(eta * y2) - phi * x * df * hs2mu * normal_cdf(eta * y2 - eta * sd);
  const double E = rebate * df * (normal_cdf(eta * x2 - eta * sd) - hs2mu * normal_cdf(eta * y2 - eta * sd));
  const double F = rebate * (pow(h / s, mu + lambda) * normal_cdf(eta * z) +
                             pow(h / s, mu - lambda) * normal_cdf(eta * z - 2.0 * eta * lambda * sd));
  const bool above = x > h;
  if (knock_in) {
    if (call && !up) return above ? C + E : A - B + D + E;
    if (call && up) return above ? A + E : B - C + D + E;
    if (!up) return above ? B - C + D + E : A + E;
    return above ? A - B + D + E : C + E;
  }
  if (call && !up) return above ? A - C + F : B - D + F;
  if (call && up) return above ? F : A - B + C - D + F;
  if (!up) return above ? A - B + C - D + F : F;
  return above ? B - D + F : A - C + F;
}

namespace detail {

// The lookback formulas divide by b; at b = 0 take the mean of b = +-eps
// (the price is smooth in b, the error is O(eps^2)).
template <class F>
STRATA_HD inline double at_carry(double rate, double dividend, F&& f) {
  const double b = rate - dividend;
  constexpr double eps = 1e-4;
  if (fabs(b) >= eps) return f(b);
  return 0.5 * (f(eps) + f(-eps));
}

}  // namespace detail

// Floating-strike lookback, observed minimum smin (call: S_T - min) or
// maximum smax (put: max - S_T) so far (Goldman, Sosin and Gatto, J. Finance
// 34 (1979); Haug sec. 4.15.1). At inception smin = smax = S.
STRATA_HD inline double lookback_floating(bool call, double spot, double extreme, double rate, double dividend,
                                          double vol, double t) {
  return detail::at_carry(rate, dividend, [&](double b) {
    const double sd = vol * sqrt(t), v2 = vol * vol;
    const double a1 = (log(spot / extreme) + (b + 0.5 * v2) * t) / sd, a2 = a1 - sd;
    const double carry = exp((b - rate) * t), df = exp(-rate * t);
    const double ratio = pow(spot / extreme, -2.0 * b / v2);
    if (call) {
      return spot * carry * normal_cdf(a1) - extreme * df * normal_cdf(a2) +
             spot * df * v2 / (2.0 * b) * (ratio * normal_cdf(-a1 + 2.0 * b * sqrt(t) / vol) - exp(b * t) * normal_cdf(-a1));
    }
    return extreme * df * normal_cdf(-a2) - spot * carry * normal_cdf(-a1) +
           spot * df * v2 / (2.0 * b) * (-ratio * normal_cdf(a1 - 2.0 * b * sqrt(t) / vol) + exp(b * t) * normal_cdf(a1));
  });
}

// Fixed-strike lookback, max(M - K, 0) (call, observed maximum `extreme`)
// or max(K - m, 0) (put, observed minimum) (Conze and Viswanathan, J.
// Finance 46 (1991); Haug sec. 4.15.2).
STRATA_HD inline double lookback_fixed(bool call, double spot, double strike, double extreme, double rate,
                                       double dividend, double vol, double t) {
  return detail::at_carry(rate, dividend, [&](double b) {
    const double sd = vol * sqrt(t), v2 = vol * vol;
    const double carry = exp((b - rate) * t), df = exp(-rate * t);
    // Beyond the observed extreme the option is a fresh one on K; inside it,
    // the extreme so far is paid for sure and the rest is on the extreme.
    const bool fresh = call ? strike > extreme : strike < extreme;
    const double level = fresh ? strike : extreme;
    const double d1 = (log(spot / level) + (b + 0.5 * v2) * t) / sd, d2 = d1 - sd;
    const double ratio = pow(spot / level, -2.0 * b / v2);
    const double sure = fresh ? 0.0 : df * (call ? extreme - strike : strike - extreme);
    if (call) {
      return sure + spot * carry * normal_cdf(d1) - level * df * normal_cdf(d2) +
             spot * df * v2 / (2.0 * b) * (-ratio * normal_cdf(d1 - 2.0 * b * sqrt(t) / vol) + exp(b * t) * normal_cdf(d1));
    }
    return sure + level * df * normal_cdf(-d2) - spot * carry * normal_cdf(-d1) +
           spot * df * v2 / (2.0 * b) * (ratio * normal_cdf(-d1 + 2.0 * b * sqrt(t) / vol) - exp(b * t) * normal_cdf(-d1));
  });
}

}  // namespace strata::kernels
