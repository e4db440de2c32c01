#include "models/pricing/greeks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "kernels/pricing/black_scholes.hpp"
#include "models/pricing/model_references.hpp"

namespace strata::pricing {

using namespace kernels::pricing;

const std::vector<std::string> kGreekNames = {"delta", "gamma", "vega", "rho", "theta", "vega_v0", "vega_theta", "vega_xi"};

namespace {

// Bump sizes. A central difference of a smooth V has bias h^2 V'''/6 (first
// derivative) and h^2 V''''/12 (second). For Black-Scholes-like prices each
// further derivative in S costs a factor of order 1/(S sigma sqrt T), in
// sigma of order 1/sigma, in T of order 1/T, so a relative bump h = 1e-2
// leaves a relative bias of order h^2 / (6 sigma^2 T) = 4e-4 at sigma = 0.2,
// T = 1 (1e-2 at sigma sqrt T = 0.05), while the standard errors of the
// Greeks at a test's 1e5 paths are 1e-2 (delta, rho, theta) to a few 1e-2
// (gamma, vega, digital delta) of their values: the bias is below a tenth of
// a standard error. Smaller bumps gain nothing (the CRN difference is then
// the pathwise estimator already) but cost, for discontinuous payoffs
// (digital, discrete barrier), variance of order 1/h, and in fp32 digits: a
// relative bump of 1e-2 moves ln S by 1e-2, 2e4 float ulps of ln 100.
// The rate moves by 1e-3 absolute (it may be 0): rho's bias is
// h^2 K T^3 / 6 e^{-rT} ~ 1e-5 of K.
constexpr double kRelativeBump = 1e-2;
constexpr double kRateBump = 1e-3;
constexpr double kFloorBump = 1e-4;   // for inputs that may be 0 (vol, v0)

constexpr const char* kMovedCentral =
    "central difference over the spot bumped by moving the base path (exact log offsets, payoffs in double; "
    "common random numbers)";
constexpr const char* kResimulatedCentral =
    "central difference of paths re-simulated with the input bumped (common random numbers)";

// The asset input a bump moves (all but rate and maturity).
template <class A>
auto& input_of(A& a, BumpedInput input) {
  switch (input) {
    case BumpedInput::vol: return a.vol;
    case BumpedInput::v0: return a.v0;
    case BumpedInput::theta: return a.theta;
    case BumpedInput::xi: return a.xi;
    default: return a.spot;
  }
}

// Inputs that may be 0 and must stay >= 0.
bool floored(BumpedInput input) { return input == BumpedInput::vol || input == BumpedInput::v0; }

double input_value(const Portfolio& p, const PathGroup& g, BumpedInput input, int asset) {
  return input_of(p.assets[static_cast<std::size_t>(g.assets[static_cast<std::size_t>(asset)])], input);
}

double bump_size(const Portfolio& p, const PathGroup& g, BumpedInput input, int asset) {
  if (input == BumpedInput::rate) return kRateBump;
  if (input == BumpedInput::maturity) return kRelativeBump * g.grid.back();
  const double h = kRelativeBump * input_value(p, g, input, asset);
  return floored(input) ? std::max(h, kFloorBump) : h;
}

// The bump of `input` by about h (signed) as the paths of `precision` take
// it. A spot bump moves the base path's log prices by
//   D = (x0 + log1p(h / e^{x0})) - x0,   x0 = ln S0 rounded to the precision
// (the path's first log price): two doubles within a factor of two of each
// other, so the difference is exact (Sterbenz) and a multiple of x0's ulp,
// and the kernel's x_k + D is exact on log prices up to x0's binade. Its
// size is the bump the moved start makes of the path's own spot,
// e^{x0 + D} - e^{x0} (in long double), so no rounding of a start enters
// the differences. (Re-simulating from fl(ln(S0 +- h)) gave a price V
// linear in S0 the second difference V (d+ - 2 d0 + d-) / h^2, d the
// three starts' roundings: docs/validation.md, "Rounding of the Greeks".)
Bump make_bump(const Portfolio& p, const PathGroup& g, BumpedInput input, int asset, double h, Precision precision) {
  if (input != BumpedInput::spot) return {input, asset, h};
  const double spot = input_value(p, g, input, asset);
  const double x0 = precision == Precision::fp32 ? static_cast<double>(static_cast<float>(std::log(spot)))
                                                 : std::log(spot);
  const double offset = (x0 + std::log1p(h / std::exp(x0))) - x0;
  const double start = x0 + offset;   // the moved path's first log price, as the kernel adds it
  const long double size = std::exp(static_cast<long double>(start)) - std::exp(static_cast<long double>(x0));
  return {input, asset, static_cast<double>(size), offset};
}

// The second difference's coefficients over the sizes h+ and h- of a spot
// bump's two scenarios: 2 / (h+ (h+ + h-)), -2 / (h+ h-), 2 / (h- (h+ + h-)).
// The outer two are rounded to multiples of twice the ulp of their sum, so
// that the middle one, minus their sum, is exact and the three sum to
// exactly 0: the part of a payoff that does not move with the spot then
// cancels exactly, where coefficients rounded each on its own leave ~1e-16
// of it per unit of coefficient (a lookback's 20: -4.6e-15 on its gamma in
// fp64). The outer two move by at most 2^-52 of themselves, so a payoff
// linear in S is missed by that fraction of its delta.
std::array<double, 3> second_difference(double hu, double hd) {
  double up = 2.0 / (hu * (hu + hd)), down = 2.0 / (hd * (hu + hd));
  const double q = std::ldexp(1.0, std::ilogb(up + down) - 51);
  up = std::nearbyint(up / q) * q;
  down = std::nearbyint(down / q) * q;
  return {up, -(up + down), down};
}

}  // namespace

// Baskets and Americans on several assets (their basket_assets).
bool per_asset_greeks(const Instrument& in) { return in.type == "basket" || !in.basket_assets.empty(); }

GreekPlan plan_greeks(const Portfolio& p, const PathGroup& g, Precision precision) {
  GreekPlan plan;
  // The scenario index of a bump (added on first use; 0: the base).
  auto scenario = [&](const Bump& bump) {
    const auto same = [&](const Bump& b) {
      return b.input == bump.input && b.asset == bump.asset && b.size == bump.size;
    };
    const auto c = std::find_if(plan.scenarios.begin(), plan.scenarios.end(), same);
    if (c != plan.scenarios.end()) return static_cast<int>(c - plan.scenarios.begin() + 1);
    plan.scenarios.push_back(bump);
    return static_cast<int>(plan.scenarios.size());
  };
  for (std::size_t j = 0; j < g.instruments.size(); ++j) {
    const Instrument& in = p.instruments[g.instruments[j]];
    const int payoff = static_cast<int>(j);
    auto slot = [&](const std::string& name, int element) {
      plan.slots.push_back({j, name, per_asset_greeks(in) ? element : -1});
      return static_cast<int>(plan.slots.size() - 1);
    };
    // The payoff's pathwise derivative along a tangent.
    const bool lipschitz =
        in.type == "european" || in.type == "asian" || in.type == "basket" || in.type == "lookback";
    auto pathwise = [&](int greek, int asset, bool vol, bool score = false) {
      plan.slots[static_cast<std::size_t>(greek)].method =
          score ? "likelihood ratio: the payoff times the score of the first step"
                : "pathwise derivative of the payoff along the base path";
      const auto same = [&](const Tangent& t) { return t.asset == asset && t.vol == vol && t.score == score; };
      const auto t = std::find_if(plan.tangents.begin(), plan.tangents.end(), same);
      const auto tangent = static_cast<int>(t - plan.tangents.begin());
      if (t == plan.tangents.end()) plan.tangents.push_back({asset, vol, score});
      plan.terms.push_back({0, payoff, greek, 1.0, tangent});
    };
    // dV/dx by (V(x + h) - V(x - h)) / 2h, times `sign` (a spot bump:
    // over the sizes the paths see, h+ + h-); for a vol or v0 below h (0
    // allowed, negative not), (V(x + h) - V(x)) / h, bias O(h).
    auto central = [&](int greek, BumpedInput input, int asset, double sign) {
      const double h = bump_size(p, g, input, asset);
      std::string& method = plan.slots[static_cast<std::size_t>(greek)].method;
      method = input == BumpedInput::spot ? kMovedCentral : kResimulatedCentral;
      if (floored(input) && input_value(p, g, input, asset) < h) {
        method = "forward difference of paths re-simulated with the input bumped (common random numbers)";
        plan.terms.push_back({scenario({input, asset, h}), payoff, greek, sign / h, -1});
        plan.terms.push_back({0, payoff, greek, -sign / h, -1});
        return;
      }
      const Bump up = make_bump(p, g, input, asset, h, precision), down = make_bump(p, g, input, asset, -h, precision);
      const double width = up.size - down.size;
      plan.terms.push_back({scenario(up), payoff, greek, sign / width, -1});
      plan.terms.push_back({scenario(down), payoff, greek, -sign / width, -1});
    };
    for (const std::string& name : p.greeks) {
      for (int a = 0; a < static_cast<int>(g.assets.size()); ++a) {
        const Asset& asset = p.assets[static_cast<std::size_t>(g.assets[static_cast<std::size_t>(a)])];
        // The digital's likelihood ratio needs the density of the first
        // step alone: one GBM asset.
        const bool score = in.type == "digital" && g.assets.size() == 1 && asset.model == "gbm" && asset.vol > 0;
        if (name == "delta" && (lipschitz || score)) pathwise(slot(name, a), a, false, score);
        if (name == "delta" && !lipschitz && !score) central(slot(name, a), BumpedInput::spot, a, 1.0);
        if (name == "gamma") {
          // ((V(S + h+) - V(S)) / h+ - (V(S) - V(S - h-)) / h-) / ((h+ + h-) / 2),
          // diagonal per asset: (V(S + h) - 2 V(S) + V(S - h)) / h^2 where
          // h+ = h- = h, and like it exact for quadratics in S.
          // All three on the base path in double: the middle one's bump is
          // 0 (one such scenario serves the group).
          const int greek = slot(name, a);
          plan.slots[static_cast<std::size_t>(greek)].method =
              "second difference over the spot bumped by moving the base path (exact log offsets, payoffs in "
              "double; common random numbers)";
          const double h = bump_size(p, g, BumpedInput::spot, a);
          const Bump up = make_bump(p, g, BumpedInput::spot, a, h, precision);
          const Bump down = make_bump(p, g, BumpedInput::spot, a, -h, precision);
          const std::array<double, 3> coef = second_difference(up.size, -down.size);
          plan.terms.push_back({scenario(up), payoff, greek, coef[0], -1});
          plan.terms.push_back({scenario({BumpedInput::spot, 0, 0.0, 0.0}), payoff, greek, coef[1], -1});
          plan.terms.push_back({scenario(down), payoff, greek, coef[2], -1});
        }
        // Heston: "vega" is all three model sensitivities; each may also be
        // asked alone (a STAC-A2 vega is v0's: 2 re-simulations per asset,
        // not 6). Other models have none of them.
        if (asset.model == "heston") {
          if (name == "vega" || name == "vega_v0") central(slot("vega_v0", a), BumpedInput::v0, a, 1.0);
          if (name == "vega" || name == "vega_theta") central(slot("vega_theta", a), BumpedInput::theta, a, 1.0);
          if (name == "vega" || name == "vega_xi") central(slot("vega_xi", a), BumpedInput::xi, a, 1.0);
        } else if (name == "vega" && lipschitz && asset.model == "gbm" && asset.vol > 0) {
          pathwise(slot(name, a), a, true);
        } else if (name == "vega") {
          central(slot(name, a), BumpedInput::vol, a, 1.0);
        }
      }
      if (name == "rho") central(slot(name, -1), BumpedInput::rate, -1, 1.0);
      // theta = dV/dt = -dV/dT.
      if (name == "theta") central(slot(name, -1), BumpedInput::maturity, -1, -1.0);
    }
  }
  // Spot bumps first: the kernel values them on the base path, which the
  // re-simulated scenarios overwrite.
  std::vector<std::size_t> order(plan.scenarios.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_partition(order.begin(), order.end(),
                        [&](std::size_t c) { return plan.scenarios[c].input == BumpedInput::spot; });
  std::vector<int> renumber(plan.scenarios.size() + 1, 0);   // old scenario -> new (0: the base)
  std::vector<Bump> scenarios;
  for (std::size_t c : order) {
    scenarios.push_back(plan.scenarios[c]);
    renumber[c + 1] = static_cast<int>(scenarios.size());
  }
  plan.scenarios = std::move(scenarios);
  for (GreekTerm& t : plan.terms) t.scenario = renumber[static_cast<std::size_t>(t.scenario)];
  std::stable_sort(plan.terms.begin(), plan.terms.end(),
                   [](const GreekTerm& a, const GreekTerm& b) { return a.scenario < b.scenario; });
  return plan;
}

Portfolio bumped_portfolio(const Portfolio& p, const PathGroup& g, const Bump& b) {
  Portfolio q = p;
  if (b.input == BumpedInput::rate) {
    q.rate += b.size;
  } else if (b.input == BumpedInput::maturity) {
    for (std::size_t i : g.instruments) q.instruments[i].maturity += b.size;
  } else {
    input_of(q.assets[static_cast<std::size_t>(g.assets[static_cast<std::size_t>(b.asset)])], b.input) += b.size;
  }
  return q;
}

std::vector<double> bumped_grid(const PathGroup& g, const Bump& b) {
  std::vector<double> grid = g.grid;
  if (b.input == BumpedInput::maturity) {
    const double scale = (g.grid.back() + b.size) / g.grid.back();
    for (double& t : grid) t *= scale;
  }
  return grid;
}

std::optional<GreekReference> greek_reference(const Portfolio& p, const Instrument& in, const std::string& name) {
  const Asset& a = p.assets[static_cast<std::size_t>(in.asset)];
  const double s = a.spot, k = in.strike, r = p.rate, q = a.dividend, t = in.maturity;
  // Far outside a formula's numerical range (a strike of 1e308) a closed
  // form can give inf or NaN: that is no reference, and is not written.
  auto finite = [](double v, const char* method) {
    return std::isfinite(v) ? std::optional(GreekReference{v, method}) : std::nullopt;
  };
  if (in.type == "european" && a.model == "gbm" && a.vol > 0) {
    const kernels::BlackScholesGreeks bs = kernels::black_scholes_greeks(in.call, s, k, r, q, a.vol, t);
    const double v = name == "delta" ? bs.delta : name == "gamma" ? bs.gamma : name == "vega" ? bs.vega
                     : name == "rho" ? bs.rho : bs.theta;
    return finite(v, "Black-Scholes-Merton closed form (Hull, sec. 19)");
  }
  if (in.type == "digital" && a.model == "gbm" && a.vol > 0 && name == "delta") {
    return finite(kernels::digital_cash_delta(in.call, s, k, r, q, a.vol, t, in.cash),
                  "cash-or-nothing closed form, d/dS of cash e^{-rT} N(d2)");
  }
  if (in.type == "european" && a.model == "heston" && name == "vega_v0") {
    // The semi-analytic price is smooth in v0 and accurate to ~1e-10: a
    // central difference with h = 1e-4 has truncation error h^2 V'''/6
    // and rounding error 1e-10 / h, both below 1e-5 (v0 < h: forward, from v0).
    const double h = 1e-4;
    HestonParams up{a.v0 + h, a.kappa, a.theta, a.xi, a.rho}, down = up;
    down.v0 = a.v0 < h ? a.v0 : a.v0 - h;
    return finite((heston_price(in.call, s, k, r, q, t, up) - heston_price(in.call, s, k, r, q, t, down)) /
                      (up.v0 - down.v0),
                  "difference (h = 1e-4) of the semi-analytic Heston price");
  }
  return std::nullopt;
}

}  // namespace strata::pricing
