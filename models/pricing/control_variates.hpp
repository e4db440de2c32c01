// Control variates (Glasserman, Monte Carlo Methods in Financial
// Engineering, 2004, section 4.1): an instrument's payoff Y is paired with a
// control C on the same path whose mean mu is known, and the run averages
// Y - beta (C - mu), whose variance is (1 - rho^2) Var Y at the optimal
// beta = Cov(Y, C) / Var C.
//
// Controls: the geometric Asian (same fixings, strike and side; Kemna-Vorst
// closed form, GBM only) for the arithmetic Asian; the discounted terminal
// underlying (mean S0 e^{-qT}) for a European; the discounted weighted
// average of the terminal underlyings (mean sum w_i S0_i e^{-q_i T}; equal
// weights for max/min baskets) for a basket.
//
// beta comes from a pilot of kPilotBlocks fixed blocks past every run's
// samples (Philox: block 2^53 / kSamplesPerBlock on; Sobol': the last
// blocks of the 2^32 points), simulated by every rank alike: the same bits
// for any rank count, chunk size or `paths` (so restarts keep their
// checkpoints), and independent of the estimate's own samples, so the
// estimate stays unbiased (Glasserman 4.1.2) and its standard error is that
// of Y - beta (C - mu).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/backend/backend.hpp"
#include "kernels/pricing/payoffs.hpp"
#include "models/pricing/portfolio.hpp"

namespace strata::pricing {

inline constexpr std::int64_t kPilotBlocks = 2;

struct ControlVariate {
  kernels::pricing::PayoffSpec<double> spec;
  double mean = 0;   // discounted, as the payoff
};

// The control of instrument `in`, whose own payoff is `payoff`, or none
// (pricing.control_variate off, or no control for its type and model). A
// basket control's weights are appended to `weights` when it needs its own.
std::optional<ControlVariate> control_for(const Portfolio& p, const Instrument& in,
                                          const kernels::pricing::PayoffSpec<double>& payoff,
                                          std::vector<double>& weights);

// beta per instrument of the group (0 where it has no control), from the
// pilot. Runs on the run's backend; local (no MPI).
std::vector<double> control_betas(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision);

}  // namespace strata::pricing
