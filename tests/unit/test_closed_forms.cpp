// The closed forms the path-dependent prices are checked against must
// themselves be right: published values and identities.
#include <catch2/catch.hpp>

#include <cmath>

#include "kernels/pricing/closed_forms.hpp"

using namespace strata::kernels;

TEST_CASE("Reiner-Rubinstein barriers reproduce Haug's table", "[closed_forms]") {
  // Haug, The Complete Guide to Option Pricing Formulas, 2nd ed., Table 4-13
  // (sigma = 25% column): S = 100, rebate K = 3, T = 0.5, r = 8%, b = 4%
  // (q = 4%); H = 95 (down) or 105 (up); strikes 90, 100, 110.
  const double strikes[3] = {90, 100, 110};
  struct Row {
    bool call, up, in;
    double value[3];
  };
  const Row rows[] = {
      {true, false, false, {9.0246, 6.7924, 4.8759}},  {true, false, true, {7.7627, 4.0109, 2.0576}},
      {true, true, false, {2.6789, 2.3580, 2.3453}},   {true, true, true, {14.1112, 8.4482, 4.5910}},
      {false, false, false, {2.2798, 2.2947, 2.6252}}, {false, false, true, {2.9586, 6.5677, 11.9752}},
      {false, true, false, {3.7760, 5.4932, 7.5187}},  {false, true, true, {1.4653, 3.3721, 7.0846}},
  };
  for (const Row& r : rows) {
    for (int k = 0; k < 3; ++k) {
      INFO((r.call ? "call " : "put ") << (r.up ? "up-and-" : "down-and-") << (r.in ? "in" : "out") << " X="
                                       << strikes[k]);
      const double v = barrier_option(r.call, r.up, r.in, 100, strikes[k], r.up ? 105 : 95, 3, 0.08, 0.04, 0.25, 0.5);
      CHECK(v == Approx(r.value[k]).margin(5e-5));
    }
  }
}

TEST_CASE("in + out = vanilla + rebate terms, without rebate exactly vanilla", "[closed_forms]") {
  for (bool call : {true, false}) {
    for (bool up : {true, false}) {
      const double h = up ? 120 : 85;
      const double in = barrier_option(call, up, true, 100, 100, h, 0, 0.05, 0.02, 0.3, 1.0);
      const double out = barrier_option(call, up, false, 100, 100, h, 0, 0.05, 0.02, 0.3, 1.0);
      CHECK(in + out == Approx(black_scholes(call, 100, 100, 0.05, 0.02, 0.3, 1.0)).epsilon(1e-12));
    }
  }
}

TEST_CASE("digital and geometric Asian reproduce Haug's examples", "[closed_forms]") {
  // Haug sec. 4.19.2: cash-or-nothing put, S = 100, X = 80, K = 10, T = 0.75,
  // r = 6%, b = 0 (q = 6%), sigma = 35%: 2.6710.
  CHECK(digital_cash(false, 100, 80, 0.06, 0.06, 0.35, 0.75, 10) == Approx(2.6710).margin(5e-5));
  // Haug sec. 4.20.1 (Kemna-Vorst, continuous average): put, S = 80, X = 85,
  // T = 0.25, r = 5%, b = 8% (q = -3%), sigma = 20%: 4.6922. The discrete
  // formula tends to it as the fixings grow.
  CHECK(geometric_asian(false, 80, 85, 0.05, -0.03, 0.2, 0.25, 1'000'000) == Approx(4.6922).margin(5e-5));
  // One fixing at T is a European option.
  CHECK(geometric_asian(true, 100, 95, 0.05, 0.01, 0.3, 2.0, 1) ==
        Approx(black_scholes(true, 100, 95, 0.05, 0.01, 0.3, 2.0)).epsilon(1e-12));
}

TEST_CASE("lookbacks reproduce Hull's example and the fixed/floating identity", "[closed_forms]") {
  // Hull, Options, Futures and Other Derivatives, 9th ed., Example 26.2: a new
  // lookback on a non-dividend-paying stock, S = 50, sigma = 40%, r = 10%,
  // T = 3 months: floating call 8.04, floating put 7.79.
  CHECK(lookback_floating(true, 50, 50, 0.1, 0.0, 0.4, 0.25) == Approx(8.04).margin(0.005));
  CHECK(lookback_floating(false, 50, 50, 0.1, 0.0, 0.4, 0.25) == Approx(7.79).margin(0.005));
  // Fixed call with K = S0 pays M_T - S0 = (M_T - S_T) + (S_T - S0): the
  // floating put plus a forward. (At q = r the formulas average b = +-1e-4:
  // an O(1e-8) relative error.)
  for (double q : {0.0, 0.02, 0.05}) {
    const double fixed = lookback_fixed(true, 100, 100, 100, 0.05, q, 0.2, 1.0);
    const double floating = lookback_floating(false, 100, 100, 0.05, q, 0.2, 1.0);
    CHECK(fixed == Approx(floating + 100 * std::exp(-q) - 100 * std::exp(-0.05)).epsilon(1e-7));
    const double fixed_put = lookback_fixed(false, 100, 100, 100, 0.05, q, 0.2, 1.0);
    const double floating_call = lookback_floating(true, 100, 100, 0.05, q, 0.2, 1.0);
    CHECK(fixed_put == Approx(floating_call - 100 * std::exp(-q) + 100 * std::exp(-0.05)).epsilon(1e-7));
  }
  // b = r - q = 0 is a removable singularity: continuous across it (the
  // mean of b = +-2e-4 differs from b = 0 by f'' (2e-4)^2 / 2, f'' ~ 100).
  const double at = lookback_floating(true, 100, 100, 0.05, 0.05, 0.2, 1.0);
  const double near = lookback_floating(true, 100, 100, 0.05, 0.05 - 2e-4, 0.2, 1.0);
  const double far = lookback_floating(true, 100, 100, 0.05, 0.05 + 2e-4, 0.2, 1.0);
  CHECK(at == Approx(0.5 * (near + far)).epsilon(1e-6));
}
