#include "models/pricing/brownian_bridge_plan.hpp"

#include <cmath>
#include <deque>
#include <stdexcept>
#include <utility>

namespace strata::pricing {

std::vector<BridgeStep> brownian_bridge_plan(const std::vector<double>& times) {
  const int n = static_cast<int>(times.size());
  if (n == 0) throw std::invalid_argument("brownian_bridge_plan: empty time grid");
  for (int i = 0; i < n; ++i)
    if (!(times[static_cast<std::size_t>(i)] > (i == 0 ? 0.0 : times[static_cast<std::size_t>(i - 1)])))
      throw std::invalid_argument("brownian_bridge_plan: times must be positive and increasing");
  const auto t = [&](int i) { return i == 0 ? 0.0 : times[static_cast<std::size_t>(i - 1)]; };

  std::vector<BridgeStep> plan;
  plan.reserve(static_cast<std::size_t>(n));
  plan.push_back({n, 0, 0, 0.0, 0.0, std::sqrt(t(n))});
  // Intervals (l, r) of grid indices whose ends are known, breadth first.
  std::deque<std::pair<int, int>> open{{0, n}};
  while (!open.empty()) {
    const auto [l, r] = open.front();
    open.pop_front();
    if (r - l < 2) continue;
    const int m = l + (r - l) / 2;
    const double tl = t(l), tm = t(m), tr = t(r);
    plan.push_back({m, l, r, (tr - tm) / (tr - tl), (tm - tl) / (tr - tl), std::sqrt((tm - tl) * (tr - tm) / (tr - tl))});
    open.emplace_back(l, m);
    open.emplace_back(m, r);
  }
  return plan;
}

}  // namespace strata::pricing
