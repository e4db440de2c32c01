// The closed form the pricing model is validated against must itself be
// right: published values, parity and limits.
#include <catch2/catch.hpp>

#include <cmath>

#include "kernels/pricing/black_scholes.hpp"
#include "kernels/pricing/closed_forms.hpp"

using strata::kernels::black_scholes;
using strata::kernels::normal_cdf;

TEST_CASE("normal CDF matches tabulated values", "[black_scholes]") {
  // Abramowitz & Stegun, Table 26.1.
  CHECK(normal_cdf(0.0) == Approx(0.5).epsilon(1e-15));
  CHECK(normal_cdf(1.0) == Approx(0.8413447460685429).epsilon(1e-14));
  CHECK(normal_cdf(-1.96) == Approx(0.024997895148220435).epsilon(1e-13));
  CHECK(normal_cdf(-8.0) == Approx(6.22096057427178e-16).epsilon(1e-10));  // tail via erfc, not 1 - erf
}

TEST_CASE("Black-Scholes reproduces Hull's worked examples", "[black_scholes]") {
  // Hull, Options, Futures and Other Derivatives, Example 15.6 (10th ed. 17.x):
  // S=42, K=40, r=10%, sigma=20%, T=0.5: c = 4.76, p = 0.81 (to the cent).
  CHECK(black_scholes(true, 42, 40, 0.10, 0.0, 0.2, 0.5) == Approx(4.7594).margin(5e-5));
  CHECK(black_scholes(false, 42, 40, 0.10, 0.0, 0.2, 0.5) == Approx(0.8086).margin(5e-5));
  // The classic ATM reference: S=K=100, r=5%, sigma=20%, T=1, q=0: 10.4506.
  CHECK(black_scholes(true, 100, 100, 0.05, 0.0, 0.2, 1.0) == Approx(10.450583572185565).epsilon(1e-12));
}

TEST_CASE("put-call parity with dividends holds to round-off", "[black_scholes]") {
  for (double k : {60.0, 95.0, 100.0, 140.0}) {
    for (double q : {0.0, 0.03}) {
      const double s = 100, r = 0.04, vol = 0.35, t = 1.7;
      const double lhs = black_scholes(true, s, k, r, q, vol, t) - black_scholes(false, s, k, r, q, vol, t);
      const double rhs = s * std::exp(-q * t) - k * std::exp(-r * t);
      CHECK(lhs == Approx(rhs).margin(1e-12 * s));
    }
  }
}

TEST_CASE("zero volatility gives the discounted intrinsic value of the forward", "[black_scholes]") {
  const double fwd = 100 * std::exp((0.05 - 0.01) * 2.0);
  CHECK(black_scholes(true, 100, 90, 0.05, 0.01, 0.0, 2.0) == Approx(std::exp(-0.1) * (fwd - 90)).epsilon(1e-14));
  CHECK(black_scholes(false, 100, 90, 0.05, 0.01, 0.0, 2.0) == 0.0);
}

TEST_CASE("Black-Scholes Greeks reproduce Hull's worked example", "[black_scholes][greeks]") {
  // Hull, Options, Futures and Other Derivatives, sec. 19.4-19.9 (the
  // running example): S=49, K=50, r=5%, sigma=20%, T=20 weeks = 0.3846,
  // q=0: delta 0.522, gamma 0.066, vega 12.1, theta -4.31 per year, rho 8.91
  // (printed to 3 digits).
  const auto g = strata::kernels::black_scholes_greeks(true, 49, 50, 0.05, 0.0, 0.2, 0.3846);
  CHECK(g.delta == Approx(0.522).margin(5e-4));
  CHECK(g.gamma == Approx(0.066).margin(5e-4));
  CHECK(g.vega == Approx(12.1).margin(0.05));
  CHECK(g.theta == Approx(-4.31).margin(5e-3));
  CHECK(g.rho == Approx(8.91).margin(5e-3));
}

TEST_CASE("Black-Scholes and digital Greeks equal differences of the prices", "[black_scholes][greeks]") {
  // Central differences with h = 1e-4 of the input: truncation h^2 V'''/6
  // and rounding 1e-16 V / h are both below 1e-7 of each Greek here.
  using strata::kernels::digital_cash;
  const double h = 1e-4;
  for (bool call : {true, false}) {
    for (double k : {80.0, 100.0, 125.0}) {
      const double s = 100, r = 0.03, q = 0.02, vol = 0.3, t = 1.5;
      auto v = [&](double s_, double r_, double vol_, double t_) { return black_scholes(call, s_, k, r_, q, vol_, t_); };
      const auto g = strata::kernels::black_scholes_greeks(call, s, k, r, q, vol, t);
      CHECK(g.delta == Approx((v(s + h, r, vol, t) - v(s - h, r, vol, t)) / (2 * h)).epsilon(1e-6));
      CHECK(g.gamma == Approx((v(s + 1e-2, r, vol, t) - 2 * v(s, r, vol, t) + v(s - 1e-2, r, vol, t)) / 1e-4).epsilon(1e-5));
      CHECK(g.vega == Approx((v(s, r, vol + h, t) - v(s, r, vol - h, t)) / (2 * h)).epsilon(1e-6));
      CHECK(g.rho == Approx((v(s, r + h, vol, t) - v(s, r - h, vol, t)) / (2 * h)).epsilon(1e-6));
      CHECK(g.theta == Approx(-(v(s, r, vol, t + h) - v(s, r, vol, t - h)) / (2 * h)).epsilon(1e-6));
      const double dd = (digital_cash(call, s + h, k, r, q, vol, t, 10) - digital_cash(call, s - h, k, r, q, vol, t, 10)) / (2 * h);
      CHECK(strata::kernels::digital_cash_delta(call, s, k, r, q, vol, t, 10) == Approx(dd).epsilon(1e-6));
    }
  }
}
