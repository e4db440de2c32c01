// Greeks by bump and re-simulation with common random numbers: a Greek's
// value on one sample is sum_t coef_t * payoff(scenario_t), each scenario
// the same sample's path re-simulated from the same normals with one input
// bumped (models/pricing/greeks.hpp builds the scenarios and terms); or,
// for a term with a tangent, coef * the payoff's pathwise derivative on
// the base path (pathwise.hpp).
//
// A spot bump is not re-simulated: under every asset model the spot enters
// a path only through its start (x_k = ln S0 + terms free of S0), so the
// bumped path is the base path with the asset's log prices moved by
// ln((S0 + h) / S0). The kernel evaluates such a scenario's payoffs on that
// moved path in double, whatever the run's precision: the scenarios then
// share every rounding of the path, and a second difference over them
// divides only double roundings by h^2 (docs/validation.md, "Rounding of
// the Greeks").
#pragma once

#include "kernels/core/hd.hpp"

namespace strata::kernels::pricing {

struct GreekTerm {
  int scenario;   // 0: the base path
  int payoff;     // the group's payoff slot
  int greek;      // the group's Greek slot it adds to
  double coef;    // e.g. +-1 / (2 h) of a central difference
  int tangent;    // >= 0: the pathwise derivative along tangent `tangent` (scenario 0); -1: none
};

// Whether a scenario's term values the same payoff as the term before it
// (first: the scenario's first term), so its values are those already at
// hand; payoff and tangent follow the terms walked.
STRATA_HD inline bool same_values(const GreekTerm& term, bool first, int& payoff, int& tangent) {
  const bool same = !first && term.payoff == payoff && term.tangent == tangent;
  payoff = term.payoff;
  tangent = term.tangent;
  return same;
}

// How a scenario's paths come about: asset < 0, re-simulated with its
// bumped inputs; else the base path with that asset's log prices moved by
// log_offset (a spot bump).
struct SpotShift {
  int asset;
  double log_offset;
};

}  // namespace strata::kernels::pricing
