// Brownian-bridge construction of a path on a time grid, for quasi-Monte
// Carlo: the first normal sets the terminal value W(t_n), the next ones the
// midpoints of ever finer intervals, so the best-distributed Sobol'
// dimensions decide the large-scale shape of the path and the effective
// dimension of a smooth payoff stays low (Glasserman, Monte Carlo Methods
// in Financial Engineering, 2004, section 3.1.2; Moskowitz & Caflisch 1996).
//
// Given W(t_l) and W(t_r) (t_0 = 0, W(t_0) = 0), the point between is
//   W(t_m) = [(t_r - t_m) W(t_l) + (t_m - t_l) W(t_r)] / (t_r - t_l)
//            + sqrt((t_m - t_l)(t_r - t_m) / (t_r - t_l)) z,
// which has exactly the covariance min(t_i, t_j) of Brownian motion: any
// grid, uniform or not, gives the same law as adding independent increments.
// The plan (which point, from which two, with which weights) is built once
// on the host (models/pricing/brownian_bridge_plan.cpp); building a path is
// n multiply-adds.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"

namespace strata::pricing {

// Step k of the plan sets w[point[k]] from w[left[k]] and w[right[k]]
// (index 0 is t_0, where W = 0; points 1..n are the grid times). Step 0 is
// the terminal point: left = 0 and right = 0 with right_weight = 0.
struct BridgeStep {
  std::int32_t point, left, right;
  double left_weight, right_weight, stddev;
};

// w[0..n]: W at t_0 = 0 and the n grid times, from normals z[0..n-1].
template <class Real>
STRATA_HD inline void brownian_bridge(const BridgeStep* plan, int n, const Real* z, Real* w) {
  w[0] = Real(0);
  for (int k = 0; k < n; ++k) {
    const BridgeStep& s = plan[k];
    w[s.point] = static_cast<Real>(s.left_weight) * w[s.left] + static_cast<Real>(s.right_weight) * w[s.right] +
                 static_cast<Real>(s.stddev) * z[k];
  }
}

}  // namespace strata::pricing
