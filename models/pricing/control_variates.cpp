#include "models/pricing/control_variates.hpp"

#include <algorithm>
#include <cmath>

#include "engine/backend/buffer.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "models/pricing/path_group_run.hpp"
#include "models/pricing/references.hpp"

namespace strata::pricing {

using namespace kernels::pricing;

std::optional<ControlVariate> control_for(const Portfolio& p, const Instrument& in,
                                          const kernels::pricing::PayoffSpec<double>& payoff,
                                          std::vector<double>& weights) {
  if (!p.control_variate) return std::nullopt;
  ControlVariate c{payoff, 0.0};
  auto forward = [&](int asset) {
    const Asset& a = p.assets[static_cast<std::size_t>(asset)];
    return a.spot * std::exp(-a.dividend * in.maturity);
  };
  if (in.type == "asian" && !in.geometric) {
    Instrument geometric = in;
    geometric.geometric = true;
    const std::optional<Reference> r = reference_for(p, geometric);
    if (!r) return std::nullopt;
    c.spec.geometric = true;
    c.mean = r->price;
    return c;
  }
  // The discounted terminal value: a call struck at 0.
  c.spec.call = true;
  c.spec.strike = 0.0;
  if (in.type == "european") {
    c.mean = forward(in.asset);
    return c;
  }
  if (in.type == "basket") {
    const std::size_t n = in.basket_assets.size();
    c.spec.basket = BasketKind::average;
    c.spec.geometric = false;
    std::vector<double> w = in.weights;
    if (in.basket != "average" || w.size() != n) {
      w.assign(n, 1.0 / static_cast<double>(n));
      c.spec.weight_begin = static_cast<int>(weights.size());
      weights.insert(weights.end(), w.begin(), w.end());
    }
    for (std::size_t a = 0; a < n; ++a) c.mean += w[a] * forward(in.basket_assets[a]);
    return c;
  }
  return std::nullopt;
}

std::vector<double> control_betas(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision) {
  PathGroupRun pilot(p, g, device, precision, kPilotBlocks, {}, true);
  std::vector<double> beta(g.instruments.size(), 0.0);
  if (std::find(pilot.controlled().begin(), pilot.controlled().end(), true) == pilot.controlled().end()) return beta;
  GroupScratch scratch{Buffer<double>(device, pilot.work_doubles()), Buffer<double>(device, pilot.lane_doubles()),
                       Buffer<double>(device, pilot.block_doubles())};
  // The pilot's first block is past the samples any run may have. Sobol'
  // point indices are 32 bits (read_portfolio keeps the run below these
  // blocks); Philox subsequences 64, the run's samples below 2^53.
  const std::int64_t first = p.sobol ? (std::int64_t{1} << 32) / kSamplesPerBlock - kPilotBlocks
                                     : (std::int64_t{1} << 53) / kSamplesPerBlock;
  std::vector<double> m;
  pilot.compute(first, kPilotBlocks, (first + kPilotBlocks) * kSamplesPerBlock, scratch, m);
  // Slot moments summed over replicates and blocks, in a fixed order.
  const std::int64_t per_slot = static_cast<std::int64_t>(p.replicates) * kPilotBlocks;
  const double n = static_cast<double>(per_slot * kSamplesPerBlock);
  auto variance = [&](std::size_t slot) {
    double s1 = 0.0, s2 = 0.0;
    for (std::int64_t k = 0; k < per_slot; ++k) {
      s1 += m[static_cast<std::size_t>((static_cast<std::int64_t>(slot) * per_slot + k) * kMoments)];
      s2 += m[static_cast<std::size_t>((static_cast<std::int64_t>(slot) * per_slot + k) * kMoments + 1)];
    }
    return (s2 - s1 * s1 / n) / (n - 1.0);
  };
  // Per controlled instrument the pilot's slots are Y, C and Y + (C - mu):
  // Cov(Y, C) = (Var(Y + C) - Var Y - Var C) / 2.
  std::size_t slot = 0;
  for (std::size_t j = 0; j < g.instruments.size(); ++j) {
    if (!pilot.controlled()[j]) continue;
    const double vy = variance(slot), vc = variance(slot + 1), vs = variance(slot + 2);
    if (vc > 0.0) beta[j] = 0.5 * (vs - vy - vc) / vc;
    slot += 3;
  }
  return beta;
}

}  // namespace strata::pricing
