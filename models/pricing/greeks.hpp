// Greeks of the path groups' instruments by central differences of
// re-simulated scenarios with common random numbers (kernels/pricing/
// greeks.hpp): which scenarios a group needs, what each Greek's terms are,
// the bumped inputs of a scenario, and the closed forms to check against.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "kernels/pricing/greeks.hpp"
#include "models/pricing/portfolio.hpp"

namespace strata::pricing {

// The Greeks pricing.greeks may ask for.
extern const std::vector<std::string> kGreekNames;

enum class BumpedInput { spot, vol, v0, theta, xi, rate, maturity };

// One scenario: `input` of the group's asset `asset` (-1: rate, maturity)
// moved by `size` (absolute, signed). A spot bump moves the base path's log
// prices by log_offset instead of re-simulating (kernels/pricing/greeks.hpp);
// its size is then the bump that offset makes of the spot the paths start
// from, e^{x0} (e^{log_offset} - 1), x0 = ln S0 in the run's precision.
struct Bump {
  BumpedInput input;
  int asset;
  double size;
  double log_offset = 0.0;
};

// One output value: Greek `name` of the group's instrument `instrument`,
// for the group's asset `element` (-1: a scalar Greek), and how it is
// estimated (written as the dataset's `method` attribute).
struct GreekSlot {
  std::size_t instrument;
  std::string name;
  int element;
  std::string method{};
};

// A pathwise term's tangent: d/d(spot) or, for a GBM asset, d/d(vol) of
// the group's asset `asset` (kernels/pricing/pathwise.hpp).
struct Tangent {
  int asset;
  bool vol;
  bool score;   // the likelihood ratio of the spot (GBM)
};

struct GreekPlan {
  std::vector<Bump> scenarios;   // scenario c = 1.. is scenarios[c - 1]; spot bumps first
  std::vector<Tangent> tangents;
  std::vector<GreekSlot> slots;
  std::vector<kernels::pricing::GreekTerm> terms;   // sorted by scenario
};

// The scenarios and Greek slots of a group (none when no Greeks are asked)
// for paths in `precision`. delta, and vega on GBM assets, are pathwise
// where the payoff is Lipschitz in the path (european, asian, basket,
// lookback); a digital's delta on a GBM asset is a likelihood ratio; every
// other Greek is a central difference of bumped scenarios, with the sizes
// of the bumps the paths see (spot bumps: Bump::log_offset).
GreekPlan plan_greeks(const Portfolio& p, const PathGroup& g, Precision precision);

// The portfolio and time grid of a scenario: the bumped input applied to
// the group's assets, the rate, or the maturity of the group's instruments
// (the grid stretched in proportion, so the step count stays).
Portfolio bumped_portfolio(const Portfolio& p, const PathGroup& g, const Bump& b);
std::vector<double> bumped_grid(const PathGroup& g, const Bump& b);

// Whether the instrument's Greeks are per asset (baskets).
bool per_asset_greeks(const Instrument& in);

// Closed form or semi-analytic value of Greek `name` (element: asset
// position in a basket, else -1), where one exists.
struct GreekReference {
  double value = 0;
  std::string method;
};
std::optional<GreekReference> greek_reference(const Portfolio& p, const Instrument& in, const std::string& name);

}  // namespace strata::pricing
