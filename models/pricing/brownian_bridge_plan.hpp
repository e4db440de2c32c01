// The host side of kernels/pricing/brownian_bridge.hpp: the construction
// order and weights for one time grid.
#pragma once

#include <vector>

#include "kernels/pricing/brownian_bridge.hpp"

namespace strata::pricing {

// times: t_1 < ... < t_n (t_0 = 0 is implied), n >= 1. Step 0 sets t_n;
// then, breadth first, each interval of the grid indices is split at its
// middle index, so the earlier normals decide the coarser structure.
// Throws std::invalid_argument for an empty or non-increasing grid.
std::vector<BridgeStep> brownian_bridge_plan(const std::vector<double>& times);

}  // namespace strata::pricing
