// Black-Scholes-Merton price of a European call or put on an asset paying a
// continuous dividend yield q (Merton 1973; Hull, "Options, Futures and
// Other Derivatives", 10th ed., eq. 17.4-17.5):
//   d1 = [ln(S/K) + (r - q + sigma^2/2) T] / (sigma sqrt T),  d2 = d1 - sigma sqrt T
//   call = S e^{-qT} N(d1) - K e^{-rT} N(d2)
//   put  = K e^{-rT} N(-d2) - S e^{-qT} N(-d1)
#pragma once

#include <cmath>

#include "kernels/core/hd.hpp"
#include "kernels/rng/normal.hpp"

namespace strata::kernels {

// Standard normal CDF through erfc, accurate in both tails; in Real
// arithmetic and Math's erfc (rng::LaneMath in the host's lanes).
template <class Real, class Math = rng::ScalarMath>
STRATA_HD inline Real normal_cdf(Real x) { return Real(0.5) * Math::erfc(-x * Real(0.70710678118654752440)); }

STRATA_HD inline double black_scholes(bool call, double spot, double strike, double rate, double dividend,
                                      double vol, double maturity) {
  const double df_r = exp(-rate * maturity);
  const double df_q = exp(-dividend * maturity);
  const double sd = vol * sqrt(maturity);
  if (sd <= 0.0) {
    // Degenerate: the terminal price is the forward.
    const double fwd = spot * df_q / df_r;
    const double intrinsic = call ? fwd - strike : strike - fwd;
    return df_r * (intrinsic > 0.0 ? intrinsic : 0.0);
  }
  const double d1 = (log(spot / strike) + (rate - dividend + 0.5 * vol * vol) * maturity) / sd;
  const double d2 = d1 - sd;
  if (call) return spot * df_q * normal_cdf(d1) - strike * df_r * normal_cdf(d2);
  return strike * df_r * normal_cdf(-d2) - spot * df_q * normal_cdf(-d1);
}

// Black-Scholes-Merton Greeks with dividend yield q (Hull, 10th ed., sec.
// 19.4-19.9 with the e^{-qT} factors of sec. 19.12; Haug sec. 2.1), per
// unit change of the input; phi the normal density, sd = sigma sqrt T:
//   delta = +- e^{-qT} N(+-d1)                gamma = e^{-qT} phi(d1) / (S sd)
//   vega  = S e^{-qT} phi(d1) sqrt T          rho   = +- K T e^{-rT} N(+-d2)
//   theta = dV/dt = -S e^{-qT} phi(d1) sigma / (2 sqrt T) -+ r K e^{-rT} N(+-d2) +- q S e^{-qT} N(+-d1)
// (upper signs: call). sd > 0.
struct BlackScholesGreeks {
  double delta, gamma, vega, rho, theta;
};

STRATA_HD inline double normal_pdf(double x) { return 0.39894228040143267794 * exp(-0.5 * x * x); }

STRATA_HD inline BlackScholesGreeks black_scholes_greeks(bool call, double spot, double strike, double rate,
                                                         double dividend, double vol, double maturity) {
  const double sd = vol * sqrt(maturity);
  const double d1 = (log(spot / strike) + (rate - dividend + 0.5 * vol * vol) * maturity) / sd;
  const double d2 = d1 - sd;
  const double s = call ? 1.0 : -1.0;
  const double df_r = exp(-rate * maturity), df_q = exp(-dividend * maturity);
  BlackScholesGreeks g{};
  g.delta = s * df_q * normal_cdf(s * d1);
  g.gamma = df_q * normal_pdf(d1) / (spot * sd);
  g.vega = spot * df_q * normal_pdf(d1) * sqrt(maturity);
  g.rho = s * strike * maturity * df_r * normal_cdf(s * d2);
  g.theta = -spot * df_q * normal_pdf(d1) * vol / (2.0 * sqrt(maturity)) - s * rate * strike * df_r * normal_cdf(s * d2) +
            s * dividend * spot * df_q * normal_cdf(s * d1);
  return g;
}

// Delta of the cash-or-nothing digital (closed_forms.hpp digital_cash):
// d/dS [cash e^{-rT} N(+-d2)] = +- cash e^{-rT} phi(d2) / (S sigma sqrt T).
STRATA_HD inline double digital_cash_delta(bool call, double spot, double strike, double rate, double dividend,
                                           double vol, double maturity, double cash) {
  const double sd = vol * sqrt(maturity);
  const double d2 = (log(spot / strike) + (rate - dividend - 0.5 * vol * vol) * maturity) / sd;
  return (call ? 1.0 : -1.0) * cash * exp(-rate * maturity) * normal_pdf(d2) / (spot * sd);
}

}  // namespace strata::kernels
