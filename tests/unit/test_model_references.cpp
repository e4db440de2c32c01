// Heston, Merton and two-asset references against published values and
// independent routes.
#include <catch2/catch.hpp>

#include <cmath>

#include "kernels/pricing/black_scholes.hpp"
#include "models/pricing/model_references.hpp"

using namespace strata::pricing;
using strata::kernels::black_scholes;

TEST_CASE("Heston prices reproduce Lewis's high-precision table", "[model_references]") {
  // A. Lewis, "Heston model reference prices" (financepress.com, 2019;
  // Mathematica, 20 digits): r = 1%, q = 2%, S = 100, T = 1, v0 = 0.04,
  // kappa = 4, theta = 0.25, xi = 1, rho = -0.5.
  const HestonParams h{0.04, 4.0, 0.25, 1.0, -0.5};
  struct Row {
    double strike, put, call;
  };
  const Row rows[] = {{80, 7.958878113256768, 26.774758743998854},
                      {90, 12.017966707346305, 20.933349000596710},
                      {100, 17.055270961270109, 16.070154917028834},
                      {110, 23.017825898442801, 12.132211516709845},
                      {120, 29.811026202682472, 9.024913483457836}};
  for (const Row& r : rows) {
    INFO("K = " << r.strike);
    CHECK(heston_price(true, 100, r.strike, 0.01, 0.02, 1.0, h) == Approx(r.call).margin(1e-9));
    CHECK(heston_price(false, 100, r.strike, 0.01, 0.02, 1.0, h) == Approx(r.put).margin(1e-9));
  }
}

TEST_CASE("Heston stays right for long maturities and a violated Feller condition", "[model_references]") {
  // Andersen (2008), test case I: kappa = 0.5, theta = v0 = 0.04, xi = 1,
  // rho = -0.9, r = q = 0, T = 10 (2 kappa theta = 0.04 < xi^2 = 1): the
  // at-the-money call is 13.0847 (his Table 1, exact value).
  CHECK(heston_price(true, 100, 100, 0.0, 0.0, 10.0, {0.04, 0.5, 0.04, 1.0, -0.9}) == Approx(13.0847).margin(5e-5));
  // xi -> 0 with v0 = theta: Black-Scholes with vol sqrt(theta).
  CHECK(heston_price(true, 100, 110, 0.03, 0.01, 2.0, {0.09, 2.0, 0.09, 1e-4, 0.0}) ==
        Approx(black_scholes(true, 100, 110, 0.03, 0.01, 0.3, 2.0)).epsilon(1e-6));
}

namespace {

// Merton's price by the Fourier integral of its characteristic function: a
// route independent of the series that merton_price sums.
double merton_price_fourier(bool call, double spot, double strike, double rate, double dividend, double vol,
                            double t, double intensity, double jump_mean, double jump_vol) {
  using cplx = std::complex<double>;
  const cplx i(0.0, 1.0);
  const double k = std::exp(jump_mean + 0.5 * jump_vol * jump_vol) - 1.0;
  auto phi = [&](cplx u) {
    const cplx drift = std::log(spot) + (rate - dividend - intensity * k - 0.5 * vol * vol) * t;
    const cplx jumps = intensity * t * (std::exp(i * u * jump_mean - 0.5 * jump_vol * jump_vol * u * u) - 1.0);
    return std::exp(i * u * drift - 0.5 * vol * vol * u * u * t + jumps);
  };
  const double call_price = call_from_cf(phi, spot, strike, rate, dividend, t);
  return call ? call_price : call_price - spot * std::exp(-dividend * t) + strike * std::exp(-rate * t);
}

}  // namespace

TEST_CASE("Merton's series equals the Fourier integral of its characteristic function", "[model_references]") {
  for (double k : {80.0, 100.0, 130.0}) {
    INFO("K = " << k);
    const double series = merton_price(true, 100, k, 0.05, 0.02, 0.2, 1.0, 1.0, -0.1, 0.15);
    const double fourier = merton_price_fourier(true, 100, k, 0.05, 0.02, 0.2, 1.0, 1.0, -0.1, 0.15);
    CHECK(series == Approx(fourier).epsilon(1e-9));
    CHECK(merton_price(false, 100, k, 0.05, 0.02, 0.2, 0.5, 3.0, 0.05, 0.3) ==
          Approx(merton_price_fourier(false, 100, k, 0.05, 0.02, 0.2, 0.5, 3.0, 0.05, 0.3)).epsilon(1e-9));
  }
  // No jumps: Black-Scholes.
  CHECK(merton_price(true, 100, 95, 0.05, 0.02, 0.2, 1.0, 0.0, -0.1, 0.15) ==
        Approx(black_scholes(true, 100, 95, 0.05, 0.02, 0.2, 1.0)).epsilon(1e-14));
}

TEST_CASE("two-asset max and min options satisfy their identities", "[model_references]") {
  CHECK(bivariate_normal_cdf(0, 0, 0.5) == Approx(1.0 / 3.0).epsilon(1e-12));   // 1/4 + asin(rho)/(2 pi)
  CHECK(bivariate_normal_cdf(0.3, -0.2, 0.0) ==
        Approx(strata::kernels::normal_cdf(0.3) * strata::kernels::normal_cdf(-0.2)).epsilon(1e-12));
  for (double rho : {-0.5, 0.0, 0.7}) {
    INFO("rho = " << rho);
    // max(S1,S2) + min(S1,S2) = S1 + S2, strike by strike.
    for (bool call : {true, false}) {
      const double mx = two_asset_extreme(call, true, 100, 105, 98, 0.05, 0.0, 0.01, 0.2, 0.3, rho, 0.5);
      const double mn = two_asset_extreme(call, false, 100, 105, 98, 0.05, 0.0, 0.01, 0.2, 0.3, rho, 0.5);
      CHECK(mx + mn == Approx(black_scholes(call, 100, 98, 0.05, 0.0, 0.2, 0.5) +
                              black_scholes(call, 105, 98, 0.05, 0.01, 0.3, 0.5))
                           .epsilon(1e-10));
    }
  }
  // A huge second asset: the max call is a call on it, the min call one on the first.
  CHECK(two_asset_extreme(true, true, 100, 1e6, 100, 0.05, 0, 0, 0.2, 0.2, 0.3, 1.0) ==
        Approx(black_scholes(true, 1e6, 100, 0.05, 0, 0.2, 1.0)).epsilon(1e-10));
  CHECK(two_asset_extreme(true, false, 100, 1e6, 100, 0.05, 0, 0, 0.2, 0.2, 0.3, 1.0) ==
        Approx(black_scholes(true, 100, 100, 0.05, 0, 0.2, 1.0)).epsilon(1e-8));
  // Geometric basket of one asset: Black-Scholes.
  CHECK(geometric_basket(true, {100}, {0.01}, {0.25}, {1.0}, {1.0}, 95, 0.04, 1.5) ==
        Approx(black_scholes(true, 100, 95, 0.04, 0.01, 0.25, 1.5)).epsilon(1e-12));
}

TEST_CASE("the Bermudan binomial tree: European limits and the Longstaff-Schwartz value", "[model_references]") {
  // One exercise date (maturity) is a European. CRR's error falls as c/n;
  // measured at 4000 steps: 5.4e-5 (call and put), 9.0e-5 for the 50-date
  // call below, so 1e-3 leaves a factor 10 for the oscillation in n.
  for (bool call : {true, false}) {
    INFO((call ? "call" : "put"));
    const double tree = bermudan_binomial(call, 100, 105, 0.05, 0.02, 0.25, 1.0, 1, 4000);
    CHECK(tree == Approx(black_scholes(call, 100, 105, 0.05, 0.02, 0.25, 1.0)).margin(1e-3));
  }
  // Early exercise never pays for a call without dividends.
  CHECK(bermudan_binomial(true, 36, 40, 0.06, 0.0, 0.2, 1.0, 50, 80) ==
        Approx(black_scholes(true, 36, 40, 0.06, 0.0, 0.2, 1.0)).margin(1e-3));
  // Longstaff and Schwartz (2001), Table 1, first row: 50 dates, their
  // finite-difference value 4.478 (3 decimals; 4.47783 at 25,600 steps).
  CHECK(bermudan_binomial(false, 36, 40, 0.06, 0.0, 0.2, 1.0, 50, 80) == Approx(4.478).margin(5e-4));
  // A put is worth at least its European value and its intrinsic value.
  const double put = bermudan_binomial(false, 36, 40, 0.06, 0.0, 0.2, 1.0, 50, 80);
  CHECK(put > black_scholes(false, 36, 40, 0.06, 0.0, 0.2, 1.0));
  CHECK(put >= 4.0);
}
