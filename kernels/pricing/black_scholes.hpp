// Black-Scholes-Merton price of a European call or put on an asset paying a
// continuous dividend yield q (Merton 1973; Hull, "Options, Futures and
// Other Derivatives", 10th ed., eq. 17.4-17.5):
//   d1 = [ln(S/K) + (r - q + sigma^2/2) T] / (sigma sqrt T),  d2 = d1 - sigma sqrt T
//   call = S e^{-qT} N(d1) - K e^{-rT} N(d2)
//   put  = K e^{-rT} N(-d2) - S e^{-qT} N(-d1)
#pragma once

#include <cmath>

#include "kernels/core/hd.hpp"

namespace strata::kernels {

// Standard normal CDF through erfc, accurate in both tails.
STRATA_HD inline double normal_cdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }

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

}  // namespace strata::kernels
