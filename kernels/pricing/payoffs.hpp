// Payoffs evaluated on one simulated path, stored as log prices of the
// group's assets on its time grid: x(k, a) = ln S_a(t_k), k = 0..n (t_0 = 0).
// Every instrument of a path group reads the same path.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/pricing/exercise_basis.hpp"
#include "kernels/pricing/greeks.hpp"
#include "kernels/rng/normal.hpp"

namespace strata::kernels::pricing {

enum class PayoffKind : int { european, digital, asian, barrier, lookback, basket, american };
enum class BasketKind : int { average, max, min };

// One instrument, as the kernels see it; built on the host in double and
// converted to Real.
template <class Real>
struct PayoffSpec {
  PayoffKind kind;
  int asset;          // the group's asset it is written on (single-asset payoffs)
  BasketKind basket;  // basket: of the group's assets, with weights[weight_begin + a] for an average
  int weight_begin;
  bool call;
  bool geometric;     // asian, basket average
  bool up, knock_in;  // barrier
  bool continuous;    // barrier, lookback monitoring
  bool floating;      // lookback
  int fix_begin;      // fixing steps: fix_steps[fix_begin .. fix_begin + fixings)
  int fixings;
  Real strike, cash, rebate;
  Real log_barrier;
  Real lookback_shift;   // BGK: beta sigma sqrt(dt), in log price
  double discount;       // e^{-rT}
  // american: exercise at the fixings; the continuation fit of fixing f is
  // exercise[coef_begin + f * (degree + 1) ..] (PathView::exercise)
  int coef_begin;
  int degree;
  bool laguerre;

  // The same payoff in another precision.
  template <class To>
  STRATA_HD PayoffSpec<To> as() const {
    return {.kind = kind, .asset = asset, .basket = basket, .weight_begin = weight_begin, .call = call,
            .geometric = geometric, .up = up, .knock_in = knock_in, .continuous = continuous, .floating = floating,
            .fix_begin = fix_begin, .fixings = fixings, .strike = To(strike), .cash = To(cash), .rebate = To(rebate),
            .log_barrier = To(log_barrier), .lookback_shift = To(lookback_shift), .discount = discount,
            .coef_begin = coef_begin, .degree = degree, .laguerre = laguerre};
  }
};

// The path of one lane, and what the group knows about its grid, read in
// Real from a path stored in Stored (a spot bump values an fp32 path in
// double). A spot bump's view also moves asset moved_asset's log prices by
// moved_offset as it reads them (x + moved_offset, the number a moved copy
// of the path would hold).
template <class Real, class Stored = Real>
struct PathView {
  const Stored* x;          // x(k, a) at x[(k * assets + a) * stride]
  const Stored* variance;   // per step k: the variance of x over it (sigma^2 dt), same layout
  std::int64_t stride;
  int assets;
  int steps;
  const int* fix_steps;
  const Real* weights;
  const double* discount_at;   // e^{-r t_k}, k = 1..n at [k - 1]
  const double* exercise;      // american: continuation coefficients (PayoffSpec::coef_begin)
  int moved_asset = -1;        // none
  Real moved_offset = 0;

  STRATA_HD Real at(int k, int a) const {
    const Real xk = static_cast<Real>(x[(static_cast<std::int64_t>(k) * assets + a) * stride]);
    return a == moved_asset ? xk + moved_offset : xk;
  }
  STRATA_HD Real var(int k, int a) const {
    return static_cast<Real>(variance[(static_cast<std::int64_t>(k) * assets + a) * stride]);
  }
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
  // Far from the level (exponent below -40, P < 4e-18) 1 - P is 1 in
  // double: skip the exp, the bulk of a barrier's cost per step.
  const Real e = Real(2) * (h - a) * (h - b);
  if (e > Real(40) * w) return Real(0);
  return std::exp(-e / w);
}

// Discounted barrier payoff. Continuous monitoring takes the expectation
// over the Brownian bridge between grid points instead of sampling it: the
// path survives step k with probability 1 - P_k, so
//   out: prod(1 - P_k) * vanilla + rebate * sum_k prod_{j<k}(1 - P_j) P_k e^{-r t_{k+1}}
//   in:  (1 - prod(1 - P_k)) * vanilla + prod(1 - P_k) * rebate e^{-rT}.
// Discrete monitoring checks the fixings only (hit: at or beyond the level).
template <class Real, class Stored>
STRATA_HD inline double barrier_value(const PayoffSpec<Real>& p, const PathView<Real, Stored>& v) {
  const Real h = p.log_barrier;
  double survive = 1.0, rebate_paid = 0.0;
  if (p.continuous) {
    for (int k = 0; k < v.steps && survive > 0.0; ++k) {
      const double cross =
          static_cast<double>(bridge_crossing(v.at(k, p.asset), v.at(k + 1, p.asset), h, v.var(k, p.asset), p.up));
      rebate_paid += survive * cross * v.discount_at[k];
      survive *= 1.0 - cross;
    }
  } else {
    for (int f = 0; f < p.fixings; ++f) {
      const int k = v.fix_steps[p.fix_begin + f];
      const Real xk = v.at(k, p.asset);
      if (p.up ? xk >= h : xk <= h) {
        survive = 0.0;
        rebate_paid = v.discount_at[k - 1];
        break;
      }
    }
  }
  const double pay = p.discount * static_cast<double>(vanilla(p.call, std::exp(v.at(v.steps, p.asset)), p.strike));
  const double rebate = static_cast<double>(p.rebate);
  if (p.knock_in) return (1.0 - survive) * pay + survive * rebate * p.discount;
  return survive * pay + rebate * rebate_paid;
}

// Lookback: running extreme over the monitoring dates (t = 0 included).
// Continuous monitoring shifts the grid extreme outward by
// exp(beta sigma sqrt(dt)) (Broadie, Glasserman and Kou 1999, "Connecting
// discrete and continuous path-dependent options", Finance Stoch. 3).
template <class Real, class Stored>
STRATA_HD inline double lookback_value(const PayoffSpec<Real>& p, const PathView<Real, Stored>& v) {
  Real hi = v.at(0, p.asset), lo = hi;
  const int n = p.continuous ? v.steps : p.fixings;
  for (int j = 1; j <= n; ++j) {
    const Real xk = v.at(p.continuous ? j : v.fix_steps[p.fix_begin + j - 1], p.asset);
    hi = xk > hi ? xk : hi;
    lo = xk < lo ? xk : lo;
  }
  const Real max_s = std::exp(hi + p.lookback_shift), min_s = std::exp(lo - p.lookback_shift);
  const Real st = std::exp(v.at(v.steps, p.asset));
  Real pay;
  if (p.floating) {
    pay = p.call ? st - min_s : max_s - st;
  } else {
    pay = p.call ? positive(max_s - p.strike) : positive(p.strike - min_s);
  }
  return p.discount * static_cast<double>(pay);
}

// Basket at maturity: weighted average (arithmetic, or geometric: exp of
// the weighted mean log), maximum or minimum of the group's assets.
template <class Real, class Stored>
STRATA_HD inline double basket_value(const PayoffSpec<Real>& p, const PathView<Real, Stored>& v) {
  Real b = p.basket == BasketKind::average ? Real(0) : std::exp(v.at(v.steps, 0));
  for (int a = 0; a < v.assets; ++a) {
    const Real xa = v.at(v.steps, a);
    if (p.basket == BasketKind::average) {
      b += v.weights[p.weight_begin + a] * (p.geometric ? xa : std::exp(xa));
    } else {
      const Real s = std::exp(xa);
      b = p.basket == BasketKind::max ? (s > b ? s : b) : (s < b ? s : b);
    }
  }
  if (p.basket == BasketKind::average && p.geometric) b = std::exp(b);
  return p.discount * static_cast<double>(vanilla(p.call, b, p.strike));
}

// The underlying of a basket average or an American at grid index k: the
// asset, or the weighted arithmetic average of the group's assets.
template <class Real, class Stored>
STRATA_HD inline Real average_underlying(const PayoffSpec<Real>& p, const PathView<Real, Stored>& v, int k) {
  if (v.assets == 1) return std::exp(v.at(k, 0));
  Real b = Real(0);
  for (int a = 0; a < v.assets; ++a) b += v.weights[p.weight_begin + a] * std::exp(v.at(k, a));
  return b;
}

// American (Bermudan) exercise by the fitted policy (Longstaff and Schwartz
// 2001): at the first exercise date where the intrinsic value is positive
// and at least the fitted continuation value, the intrinsic value,
// discounted from that date; at the last date, the intrinsic value.
template <class Real, class Stored>
STRATA_HD inline double american_value(const PayoffSpec<Real>& p, const PathView<Real, Stored>& v) {
  for (int f = 0; f < p.fixings; ++f) {
    const int k = v.fix_steps[p.fix_begin + f];
    const Real u = average_underlying(p, v, k);
    const double intrinsic = static_cast<double>(vanilla(p.call, u, p.strike));
    if (!(intrinsic > 0.0)) continue;
    const bool last = f + 1 == p.fixings;
    if (last || intrinsic >= continuation_value(p.laguerre, p.degree, v.exercise + p.coef_begin + f * (p.degree + 1),
                                                static_cast<double>(u / p.strike))) {
      return v.discount_at[k - 1] * intrinsic;
    }
  }
  return 0.0;
}

// The most spot bumps valued in one pass over a path (american_values): an
// up and a down bump of each of 8 assets, and the gammas' middle point.
inline constexpr int kMovedAtOnce = 17;

// American exercise as american_value on n <= kMovedAtOnce spot bumps of
// one path at once: scenario s is the path with asset shifts[s].asset's log
// prices moved by shifts[s].log_offset, its payoff specs[s * spec_stride].
// Each date's cells are read and their exponentials taken once for all
// scenarios still open; each scenario's value takes the same operations in
// the same order as american_value on its own moved view (bitwise the
// same). The scenarios share the path's dates, weights, discounts and
// policy (a spot bump moves the path alone). MaxAssets bounds v.assets.
template <int MaxAssets, class Stored>
STRATA_HD inline void american_values(const PayoffSpec<double>* specs, int spec_stride, const SpotShift* shifts, int n,
                                      const PathView<double, Stored>& v, double* out) {
  bool open[kMovedAtOnce];
  int left = n;
  for (int s = 0; s < n; ++s) {
    out[s] = 0.0;
    open[s] = true;
  }
  const PayoffSpec<double>& dates = specs[0];
  for (int f = 0; f < dates.fixings && left > 0; ++f) {
    const int k = v.fix_steps[dates.fix_begin + f];
    double price[MaxAssets];   // each asset's, unmoved
    for (int a = 0; a < v.assets; ++a) price[a] = std::exp(v.at(k, a));
    for (int s = 0; s < n; ++s) {
      if (!open[s]) continue;
      const PayoffSpec<double>& p = specs[s * spec_stride];
      const int moved = shifts[s].asset;
      const double moved_price = std::exp(v.at(k, moved) + shifts[s].log_offset);
      // average_underlying on the moved view.
      double u = moved_price;
      if (v.assets > 1) {
        u = 0.0;
        for (int a = 0; a < v.assets; ++a) u += v.weights[p.weight_begin + a] * (a == moved ? moved_price : price[a]);
      }
      const double intrinsic = vanilla(p.call, u, p.strike);
      if (!(intrinsic > 0.0)) continue;
      const bool last = f + 1 == p.fixings;
      if (last || intrinsic >= continuation_value(p.laguerre, p.degree, v.exercise + p.coef_begin + f * (p.degree + 1),
                                                  u / p.strike)) {
        out[s] = v.discount_at[k - 1] * intrinsic;
        open[s] = false;
        --left;
      }
    }
  }
}

// European and Asian on the paths of W lanes (lane l's at v.x + l), the
// host's hot kinds, in loops over the lanes: S_T, or the mean of S at the
// fixings (geometric: exp of the mean log). A put's strike - S is written
// -(S - strike), the same number.
template <int W, class Math, class Real, class Stored>
STRATA_HD inline void average_payoffs(const PayoffSpec<Real>& p, const PathView<Real, Stored>& v, double* out) {
  const bool asian = p.kind == PayoffKind::asian, geometric = asian && p.geometric;
  const int n = asian ? p.fixings : 1;
  const Real sign = p.call ? Real(1) : Real(-1);
  Real value[W];
  STRATA_LANES()
  for (int l = 0; l < W; ++l) value[l] = Real(0);
  if (v.moved_asset >= 0) {
    // A spot bump's moved view (one lane): its reads through at().
    for (int f = 0; f < n; ++f) {
      const Real xf = v.at(asian ? v.fix_steps[p.fix_begin + f] : v.steps, p.asset);
      value[0] += geometric ? xf : Math::exp(xf);
    }
  }
  for (int f = 0; f < n && v.moved_asset < 0; ++f) {
    const Stored* xf = &v.x[(static_cast<std::int64_t>(asian ? v.fix_steps[p.fix_begin + f] : v.steps) * v.assets +
                           p.asset) * v.stride];
    if (geometric) {
      STRATA_LANES()
      for (int l = 0; l < W; ++l) value[l] += static_cast<Real>(xf[l]);
    } else {
      STRATA_LANES()
      for (int l = 0; l < W; ++l) value[l] += Math::exp(static_cast<Real>(xf[l]));
    }
  }
  const Real rn = static_cast<Real>(n);
  STRATA_LANES()
  for (int l = 0; l < W; ++l) value[l] /= rn;
  if (geometric) {
    STRATA_LANES()
    for (int l = 0; l < W; ++l) value[l] = Math::exp(value[l]);
  }
  STRATA_LANES()
  for (int l = 0; l < W; ++l) value[l] = positive(sign * (value[l] - p.strike));
  STRATA_LANES()
  for (int l = 0; l < W; ++l) out[l] = p.discount * static_cast<double>(value[l]);
}

// Discounted payoff of instrument p on path v.
template <class Real, class Stored>
STRATA_HD inline double path_payoff(const PayoffSpec<Real>& p, const PathView<Real, Stored>& v) {
  double out = 0.0;
  switch (p.kind) {
    case PayoffKind::european:
    case PayoffKind::asian:
      average_payoffs<1, rng::ScalarMath>(p, v, &out);
      return out;
    case PayoffKind::digital: {
      const Real st = std::exp(v.at(v.steps, p.asset));
      const bool pays = p.call ? st > p.strike : st < p.strike;
      return pays ? p.discount * static_cast<double>(p.cash) : 0.0;
    }
    case PayoffKind::barrier:
      return barrier_value(p, v);
    case PayoffKind::lookback:
      return lookback_value(p, v);
    case PayoffKind::basket:
      return basket_value(p, v);
    case PayoffKind::american:
      return american_value(p, v);
  }
  return out;
}

}  // namespace strata::kernels::pricing
