// Stoker's (1957) wet-bed dam break: depth h_left for x < x0 and h_right
// for x > x0, at rest, no rotation. The exact solution is self-similar in
// (x - x0) / t: a rarefaction into the left state, a uniform intermediate
// state (h_m, u_m), and a shock into the right state. h_m solves
//   2 (c_l - c_m) = (h_m - h_r) sqrt(g/2 (1/h_m + 1/h_r))
// (Riemann invariant across the rarefaction = mass and momentum jump
// conditions across the shock; Toro, Shock-capturing methods for
// free-surface shallow flows, 2001, ch. 4), found here by bisection.
#pragma once

#include <cmath>

namespace strata::shallow_water {

struct Stoker {
  double g, h_left, h_right, x0;
  double h_mid = 0, u_mid = 0, shock_speed = 0;

  Stoker(double g_, double hl, double hr, double x0_) : g(g_), h_left(hl), h_right(hr), x0(x0_) {
    const double cl = std::sqrt(g * hl);
    double lo = hr, hi = hl;
    for (int it = 0; it < 200 && hi - lo > 0; ++it) {
      const double hm = 0.5 * (lo + hi);
      const double f = 2 * (cl - std::sqrt(g * hm)) - (hm - hr) * std::sqrt(0.5 * g * (1 / hm + 1 / hr));
      (f > 0 ? lo : hi) = hm;
    }
    h_mid = 0.5 * (lo + hi);
    u_mid = 2 * (cl - std::sqrt(g * h_mid));
    shock_speed = h_mid * u_mid / (h_mid - hr);
  }

  // Depth at x, time t > 0 (h_left >= h_right).
  double h(double x, double t) const {
    const double xi = (x - x0) / t, cl = std::sqrt(g * h_left), cm = std::sqrt(g * h_mid);
    if (xi <= -cl) return h_left;
    if (xi <= u_mid - cm) {
      const double c = (2 * cl - xi) / 3;
      return c * c / g;
    }
    return xi < shock_speed ? h_mid : h_right;
  }
};

}  // namespace strata::shallow_water
