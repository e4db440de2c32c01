#include "models/pricing/references.hpp"

#include <cmath>

#include "kernels/pricing/black_scholes.hpp"
#include "kernels/pricing/closed_forms.hpp"

namespace strata::pricing {

std::optional<Reference> reference_for(const Portfolio& p, const Instrument& i) {
  const Asset& a = p.assets[static_cast<std::size_t>(i.asset)];
  if (a.model != "gbm") return std::nullopt;
  const double s = a.spot, r = p.rate, q = a.dividend, v = a.vol, t = i.maturity;
  if (i.type == "european") {
    return Reference{kernels::black_scholes(i.call, s, i.strike, r, q, v, t), "Black-Scholes-Merton closed form"};
  }
  if (i.type == "digital") {
    return Reference{kernels::digital_cash(i.call, s, i.strike, r, q, v, t, i.cash),
                     "cash-or-nothing closed form (Reiner-Rubinstein 1991)"};
  }
  if (i.type == "asian") {
    if (!i.geometric) return std::nullopt;
    return Reference{kernels::geometric_asian(i.call, s, i.strike, r, q, v, t, i.fixings),
                     "discrete geometric average closed form (Kemna-Vorst 1990, discrete fixings)"};
  }
  if (i.type == "barrier") {
    if (i.continuous) {
      return Reference{kernels::barrier_option(i.call, i.kind.up, i.kind.knock_in, s, i.strike, i.barrier, i.rebate,
                                               r, q, v, t),
                       "continuous barrier closed form (Reiner-Rubinstein 1991)"};
    }
    // Discrete monitoring has no closed form; the Broadie-Glasserman-Kou
    // shifted barrier is an approximation whose error (2% for an up-and-out
    // call with 50 fixings, docs/validation.md) exceeds Monte Carlo errors.
    return std::nullopt;
  }
  if (i.type == "lookback" && i.continuous) {
    if (i.floating) {
      return Reference{kernels::lookback_floating(i.call, s, s, r, q, v, t),
                       "floating-strike lookback closed form (Goldman-Sosin-Gatto 1979)"};
    }
    return Reference{kernels::lookback_fixed(i.call, s, i.strike, s, r, q, v, t),
                     "fixed-strike lookback closed form (Conze-Viswanathan 1991)"};
  }
  return std::nullopt;
}

}  // namespace strata::pricing
