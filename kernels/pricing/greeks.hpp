// Greeks by bump and re-simulation with common random numbers: a Greek's
// value on one sample is sum_t coef_t * payoff(scenario_t), each scenario
// the same sample's path re-simulated from the same normals with one input
// bumped (models/pricing/greeks.hpp builds the scenarios and terms); or,
// for a term with a tangent, coef * the payoff's pathwise derivative on
// the base path (pathwise.hpp).
#pragma once

namespace strata::kernels::pricing {

struct GreekTerm {
  int scenario;   // 0: the base path
  int payoff;     // the group's payoff slot
  int greek;      // the group's Greek slot it adds to
  double coef;    // e.g. +-1 / (2 h) of a central difference
  int tangent;    // >= 0: the pathwise derivative along tangent `tangent` (scenario 0); -1: none
};

}  // namespace strata::kernels::pricing
