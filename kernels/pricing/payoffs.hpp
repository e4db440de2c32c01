// Payoffs evaluated on one simulated path, stored as log prices on the
// group's time grid: x[0] = ln S_0, x[k] = ln S(t_k), k = 1..n, read as
// x[k * stride]. Every instrument of a path group reads the same path.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"

namespace strata::kernels::pricing {

enum class PayoffKind : int { european, digital, asian, barrier, lookback };

// One instrument, as the kernels see it; built on the host in double and
// converted to Real.
template <class Real>
struct PayoffSpec {
  PayoffKind kind;
  bool call;
  bool geometric;     // asian
  bool up, knock_in;  // barrier
  bool continuous;    // barrier, lookback monitoring
  bool floating;      // lookback
  int fix_begin;      // fixing steps: fix_steps[fix_begin .. fix_begin + fixings)
  int fixings;
  Real strike, cash, rebate;
  Real log_barrier;
  Real lookback_shift;   // BGK: beta sigma sqrt(dt), in log price
  double discount;       // e^{-rT}
};

// The path of one lane, and what the group knows about its grid.
template <class Real>
struct PathView {
  const Real* x;            // x[k * stride]
  std::int64_t stride;
  int steps;
  const Real* variance;     // per step: the log price's variance over the step (sigma^2 dt)
  const int* fix_steps;
  const double* discount_at;   // e^{-r t_k}, k = 1..n at [k - 1]

  STRATA_HD Real at(int k) const { return x[k * stride]; }
};

template <class Real>
STRATA_HD inline Real positive(Real v) {
  return v > Real(0) ? v : Real(0);
}

template <class Real>
STRATA_HD inline Real vanilla(bool call, Real s, Real strike) {
  return positive(call ? s - strike : strike - s);
}

// Probability that a Brownian bridge from a to b with variance w crosses
// the level h (it starts and ends on the same side):
//   P = exp(-2 (h - a)(h - b) / w)
// (Glasserman, "Monte Carlo Methods in Financial Engineering", sec. 6.4;
// exact for GBM between grid points).
template <class Real>
STRATA_HD inline Real bridge_crossing(Real a, Real b, Real h, Real w, bool up) {
  if (up ? (a >= h || b >= h) : (a <= h || b <= h)) return Real(1);
  return std::exp(Real(-2) * (h - a) * (h - b) / w);
}

// Discounted barrier payoff. Continuous monitoring takes the expectation
// over the Brownian bridge between grid points instead of sampling it: the
// path survives step k with probability 1 - P_k, so
//   out: prod(1 - P_k) * vanilla + rebate * sum_k prod_{j<k}(1 - P_j) P_k e^{-r t_{k+1}}
//   in:  (1 - prod(1 - P_k)) * vanilla + prod(1 - P_k) * rebate e^{-rT}.
// Discrete monitoring checks the fixings only (hit: at or beyond the level).
template <class Real>
STRATA_HD inline double barrier_value(const PayoffSpec<Real>& p, const PathView<Real>& v) {
  const Real h = p.log_barrier;
  double survive = 1.0, rebate_paid = 0.0;
  if (p.continuous) {
    for (int k = 0; k < v.steps && survive > 0.0; ++k) {
      const double cross = static_cast<double>(bridge_crossing(v.at(k), v.at(k + 1), h, v.variance[k], p.up));
      rebate_paid += survive * cross * v.discount_at[k];
      survive *= 1.0 - cross;
    }
  } else {
    for (int f = 0; f < p.fixings; ++f) {
      const int k = v.fix_steps[p.fix_begin + f];
      const Real xk = v.at(k);
      if (p.up ? xk >= h : xk <= h) {
        survive = 0.0;
        rebate_paid = v.discount_at[k - 1];
        break;
      }
    }
  }
  const double pay = p.discount * static_cast<double>(vanilla(p.call, std::exp(v.at(v.steps)), p.strike));
  const double rebate = static_cast<double>(p.rebate);
  if (p.knock_in) return (1.0 - survive) * pay + survive * rebate * p.discount;
  return survive * pay + rebate * rebate_paid;
}

// Lookback: running extreme over the monitoring dates (t = 0 included).
// Continuous monitoring shifts the grid extreme outward by
// exp(beta sigma sqrt(dt)) (Broadie, Glasserman and Kou 1999, "Connecting
// discrete and continuous path-dependent options", Finance Stoch. 3).
template <class Real>
STRATA_HD inline double lookback_value(const PayoffSpec<Real>& p, const PathView<Real>& v) {
  Real hi = v.at(0), lo = v.at(0);
  const int n = p.continuous ? v.steps : p.fixings;
  for (int j = 1; j <= n; ++j) {
    const Real xk = v.at(p.continuous ? j : v.fix_steps[p.fix_begin + j - 1]);
    hi = xk > hi ? xk : hi;
    lo = xk < lo ? xk : lo;
  }
  const Real max_s = std::exp(hi + p.lookback_shift), min_s = std::exp(lo - p.lookback_shift);
  const Real st = std::exp(v.at(v.steps));
  Real pay;
  if (p.floating) {
    pay = p.call ? st - min_s : max_s - st;
  } else {
    pay = p.call ? positive(max_s - p.strike) : positive(p.strike - min_s);
  }
  return p.discount * static_cast<double>(pay);
}

// Discounted payoff of instrument p on path v.
template <class Real>
STRATA_HD inline double path_payoff(const PayoffSpec<Real>& p, const PathView<Real>& v) {
  switch (p.kind) {
    case PayoffKind::european:
      return p.discount * static_cast<double>(vanilla(p.call, std::exp(v.at(v.steps)), p.strike));
    case PayoffKind::digital: {
      const Real st = std::exp(v.at(v.steps));
      const bool pays = p.call ? st > p.strike : st < p.strike;
      return pays ? p.discount * static_cast<double>(p.cash) : 0.0;
    }
    case PayoffKind::asian: {
      // Arithmetic: mean of S at the fixings; geometric: exp of the mean log.
      Real sum = Real(0);
      for (int f = 0; f < p.fixings; ++f) {
        const Real xk = v.at(v.fix_steps[p.fix_begin + f]);
        sum += p.geometric ? xk : std::exp(xk);
      }
      const Real mean = sum / static_cast<Real>(p.fixings);
      const Real avg = p.geometric ? std::exp(mean) : mean;
      return p.discount * static_cast<double>(vanilla(p.call, avg, p.strike));
    }
    case PayoffKind::barrier:
      return barrier_value(p, v);
    case PayoffKind::lookback:
      return lookback_value(p, v);
  }
  return 0.0;
}

}  // namespace strata::kernels::pricing
