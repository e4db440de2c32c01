// Reference prices beyond the single-asset GBM closed forms: Heston by its
// characteristic function, Merton jump diffusion by its series, and
// two-asset and geometric baskets. Host code (complex arithmetic and
// quadrature); all prices discounted, continuous dividend yields q.
#pragma once

#include <complex>
#include <functional>
#include <vector>

namespace strata::pricing {

struct HestonParams {
  double v0, kappa, theta, xi, rho;
};

// European call from phi, a characteristic function of ln S_T with
// phi(-i) = S e^{(r-q)T}: S e^{-qT} P1 - K e^{-rT} P2 (Heston 1993's P1, P2).
double call_from_cf(const std::function<std::complex<double>(std::complex<double>)>& phi, double spot,
                    double strike, double rate, double dividend, double t);

// European call or put under Heston: S e^{-qT} P1 - K e^{-rT} P2 (Heston,
// Rev. Financial Studies 6 (1993)), each P_j = 1/2 + 1/pi int_0^inf Re(...)
// du by composite 16-point Gauss-Legendre; the put by parity.
double heston_price(bool call, double spot, double strike, double rate, double dividend, double t,
                    const HestonParams& h);

// Merton (1976) log-normal jump diffusion: the Poisson-weighted series of
// Black-Scholes prices (each at its own rate, Hull, "Options, Futures and
// Other Derivatives", sec. 27.1) with r_n = r - lambda k + n ln(1 + k)/T and
// sigma_n^2 = sigma^2 + n delta^2 / T under intensity lambda' = lambda (1 + k),
// k = exp(m + delta^2/2) - 1, summed until the weights are below 1e-16.
double merton_price(bool call, double spot, double strike, double rate, double dividend, double vol, double t,
                    double intensity, double jump_mean, double jump_vol);

// P(X <= a, Y <= b) for standard normals with correlation rho, by
// Gauss-Legendre quadrature of phi(x) Phi((b - rho x)/sqrt(1 - rho^2)).
double bivariate_normal_cdf(double a, double b, double rho);

// Call or put on the maximum or minimum of two assets (Stulz, J. Financial
// Economics 10 (1982); Haug sec. 4.12.2): payoff max(max(S1,S2) - K, 0) etc.
double two_asset_extreme(bool call, bool maximum, double s1, double s2, double strike, double rate, double q1,
                         double q2, double vol1, double vol2, double rho, double t);

// Call or put on the weighted geometric mean prod S_i^{w_i} at T: log-normal
// with mean sum w_i (ln S_i + (r - q_i - sigma_i^2/2) T) and variance
// T sum_ij w_i w_j rho_ij sigma_i sigma_j.
double geometric_basket(bool call, const std::vector<double>& spot, const std::vector<double>& dividend,
                        const std::vector<double>& vol, const std::vector<double>& weights,
                        const std::vector<double>& correlation, double strike, double rate, double t);

// Bermudan call or put on one GBM asset, exercisable at T/dates, 2T/dates,
// ..., T, on a Cox-Ross-Rubinstein (1979) binomial tree of dates *
// steps_per_date steps (u = exp(vol sqrt(dt)), p = (e^{(r-q)dt} - 1/u) /
// (u - 1/u)), exercise compared with continuation at the date nodes only.
// Its error falls as 1/steps but oscillates with the strike's place among
// the nodes. O(steps^2) work and O(steps) memory.
double bermudan_binomial(bool call, double spot, double strike, double rate, double dividend, double vol, double t,
                         int dates, int steps_per_date);

}  // namespace strata::pricing
