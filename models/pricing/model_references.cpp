#include "models/pricing/model_references.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "kernels/pricing/black_scholes.hpp"

namespace strata::pricing {
namespace {

using cplx = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

// 16-point Gauss-Legendre nodes and weights on [-1, 1] (Abramowitz and
// Stegun, Table 25.4), positive half.
constexpr double kGlNode[8] = {0.0950125098376374, 0.2816035507792589, 0.4580167776572274, 0.6178762444026438,
                               0.7554044083550030, 0.8656312023878318, 0.9445750230732326, 0.9894009349916499};
constexpr double kGlWeight[8] = {0.1894506104550685, 0.1826034150449236, 0.1691565193950025, 0.1495959888165767,
                                 0.1246289712555339, 0.0951585116824928, 0.0622535239386479, 0.0271524594117541};

double gauss_legendre(const std::function<double(double)>& f, double a, double b) {
  const double mid = 0.5 * (a + b), half = 0.5 * (b - a);
  double sum = 0.0;
  for (int i = 0; i < 8; ++i) sum += kGlWeight[i] * (f(mid - half * kGlNode[i]) + f(mid + half * kGlNode[i]));
  return half * sum;
}

// int_0^inf f by panels of width 0.5 until ten panels in a row add less
// than 1e-15 of the total (the integrands decay at least exponentially in
// u for any T > 0 and v0 + theta > 0), at most u = 5000.
double integrate_tail(const std::function<double(double)>& f) {
  double total = 0.0;
  int quiet = 0;
  for (double a = 0.0; a < 5000.0 && quiet < 10; a += 0.5) {
    const double piece = gauss_legendre(f, a, a + 0.5);
    total += piece;
    quiet = std::fabs(piece) < 1e-15 * std::max(1.0, std::fabs(total)) ? quiet + 1 : 0;
  }
  return total;
}

// E[exp(i u ln S_T)] under Heston, in the "little trap" form of Albrecher,
// Mayer, Schoutens and Tistaert, "The little Heston trap", Wilmott (2007),
// which stays on the principal branch of the logarithm for long maturities.
cplx heston_cf(cplx u, double spot, double rate, double dividend, double t, const HestonParams& h) {
  const cplx i(0.0, 1.0);
  const double x2 = h.xi * h.xi;
  const cplx beta = h.kappa - h.rho * h.xi * i * u;
  const cplx d = std::sqrt(beta * beta + x2 * (i * u + u * u));
  const cplx g = (beta - d) / (beta + d);
  const cplx e = std::exp(-d * t);
  const cplx c = h.kappa * h.theta / x2 * ((beta - d) * t - 2.0 * std::log((1.0 - g * e) / (1.0 - g)));
  const cplx dd = (beta - d) / x2 * (1.0 - e) / (1.0 - g * e);
  return std::exp(i * u * (std::log(spot) + (rate - dividend) * t) + c + dd * h.v0);
}

}  // namespace

double call_from_cf(const std::function<cplx(cplx)>& phi, double spot, double strike, double rate, double dividend,
                    double t) {
  const cplx i(0.0, 1.0);
  const double lk = std::log(strike);
  const cplx forward = phi(-i);
  auto p1 = [&](double u) { return std::real(std::exp(-i * u * lk) * phi(u - i) / (i * u * forward)); };
  auto p2 = [&](double u) { return std::real(std::exp(-i * u * lk) * phi(u) / (i * u)); };
  const double P1 = 0.5 + integrate_tail(p1) / kPi;
  const double P2 = 0.5 + integrate_tail(p2) / kPi;
  return spot * std::exp(-dividend * t) * P1 - strike * std::exp(-rate * t) * P2;
}

double heston_price(bool call, double spot, double strike, double rate, double dividend, double t,
                    const HestonParams& h) {
  auto phi = [&](cplx u) { return heston_cf(u, spot, rate, dividend, t, h); };
  const double call_price = call_from_cf(phi, spot, strike, rate, dividend, t);
  return call ? call_price : call_price - spot * std::exp(-dividend * t) + strike * std::exp(-rate * t);
}

double merton_price(bool call, double spot, double strike, double rate, double dividend, double vol, double t,
                    double intensity, double jump_mean, double jump_vol) {
  const double k = std::exp(jump_mean + 0.5 * jump_vol * jump_vol) - 1.0;
  const double lt = intensity * (1.0 + k) * t;
  double sum = 0.0, weight = std::exp(-lt);
  for (int n = 0; n < 1000; ++n) {
    if (n > 0) weight *= lt / n;
    const double vn = std::sqrt(vol * vol + n * jump_vol * jump_vol / t);
    const double rn = rate - intensity * k + n * std::log1p(k) / t;
    sum += weight * kernels::black_scholes(call, spot, strike, rn, dividend, vn, t);
    if (n > lt && weight < 1e-16) break;
  }
  return sum;
}

double bivariate_normal_cdf(double a, double b, double rho) {
  if (rho >= 1.0) return kernels::normal_cdf(std::min(a, b));
  if (rho <= -1.0) return std::max(0.0, kernels::normal_cdf(a) - kernels::normal_cdf(-b));
  const double s = std::sqrt(1.0 - rho * rho);
  auto f = [&](double x) {
    return std::exp(-0.5 * x * x) / std::sqrt(2.0 * kPi) * kernels::normal_cdf((b - rho * x) / s);
  };
  // Below -12 the density is < 1e-31.
  const double lo = -12.0, hi = std::max(lo, std::min(a, 12.0));
  const int panels = 200;
  double sum = 0.0;
  for (int p = 0; p < panels; ++p) sum += gauss_legendre(f, lo + (hi - lo) * p / panels, lo + (hi - lo) * (p + 1) / panels);
  return sum;
}

double two_asset_extreme(bool call, bool maximum, double s1, double s2, double strike, double rate, double q1,
                         double q2, double vol1, double vol2, double rho, double t) {
  const double b1 = rate - q1, b2 = rate - q2, st = std::sqrt(t);
  const double sig = std::sqrt(vol1 * vol1 + vol2 * vol2 - 2.0 * rho * vol1 * vol2);
  const double c1 = s1 * std::exp((b1 - rate) * t), c2 = s2 * std::exp((b2 - rate) * t), df = std::exp(-rate * t);
  const double d = (std::log(s1 / s2) + (b1 - b2 + 0.5 * sig * sig) * t) / (sig * st);
  const double rho1 = (vol1 - rho * vol2) / sig, rho2 = (vol2 - rho * vol1) / sig;
  // E[e^{-rT} max(S1 - S2, 0)] (Margrabe 1978).
  const double exchange = c1 * kernels::normal_cdf(d) - c2 * kernels::normal_cdf(d - sig * st);
  auto call_on = [&](double x) {
    if (x <= 0.0) return maximum ? c2 + exchange : c1 - exchange;   // the max or min itself
    const double y1 = (std::log(s1 / x) + (b1 + 0.5 * vol1 * vol1) * t) / (vol1 * st);
    const double y2 = (std::log(s2 / x) + (b2 + 0.5 * vol2 * vol2) * t) / (vol2 * st);
    if (maximum) {
      return c1 * bivariate_normal_cdf(y1, d, rho1) + c2 * bivariate_normal_cdf(y2, -d + sig * st, rho2) -
             x * df * (1.0 - bivariate_normal_cdf(-y1 + vol1 * st, -y2 + vol2 * st, rho));
    }
    return c1 * bivariate_normal_cdf(y1, -d, -rho1) + c2 * bivariate_normal_cdf(y2, d - sig * st, -rho2) -
           x * df * bivariate_normal_cdf(y1 - vol1 * st, y2 - vol2 * st, rho);
  };
  // Put by parity: max(K - M, 0) = K - M + max(M - K, 0).
  return call ? call_on(strike) : strike * df - call_on(0.0) + call_on(strike);
}

double geometric_basket(bool call, const std::vector<double>& spot, const std::vector<double>& dividend,
                        const std::vector<double>& vol, const std::vector<double>& weights,
                        const std::vector<double>& correlation, double strike, double rate, double t) {
  const std::size_t n = spot.size();
  double mean = 0.0, var = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    mean += weights[i] * (std::log(spot[i]) + (rate - dividend[i] - 0.5 * vol[i] * vol[i]) * t);
    for (std::size_t j = 0; j < n; ++j) var += weights[i] * weights[j] * correlation[i * n + j] * vol[i] * vol[j] * t;
  }
  const double sd = std::sqrt(var);
  const double d2 = (mean - std::log(strike)) / sd, d1 = d2 + sd;
  const double fwd = std::exp(mean + 0.5 * var), df = std::exp(-rate * t);
  return call ? df * (fwd * kernels::normal_cdf(d1) - strike * kernels::normal_cdf(d2))
              : df * (strike * kernels::normal_cdf(-d2) - fwd * kernels::normal_cdf(-d1));
}

double bermudan_binomial(bool call, double spot, double strike, double rate, double dividend, double vol, double t,
                         int dates, int steps_per_date) {
  const int n = dates * steps_per_date;
  const double dt = t / n, h = vol * std::sqrt(dt);
  const double u = std::exp(h);
  const double p = (std::exp((rate - dividend) * dt) - 1.0 / u) / (u - 1.0 / u);
  const double up = std::exp(-rate * dt) * p, down = std::exp(-rate * dt) * (1.0 - p);
  auto intrinsic = [&](int step, int j) {
    const double s = spot * std::exp(h * (step - 2 * j));   // j down moves of step
    return std::max(call ? s - strike : strike - s, 0.0);
  };
  std::vector<double> v(static_cast<std::size_t>(n) + 1);
  for (int j = 0; j <= n; ++j) v[static_cast<std::size_t>(j)] = intrinsic(n, j);
  for (int step = n - 1; step >= 0; --step) {
    for (int j = 0; j <= step; ++j)
      v[static_cast<std::size_t>(j)] = up * v[static_cast<std::size_t>(j)] + down * v[static_cast<std::size_t>(j) + 1];
    if (step > 0 && step % steps_per_date == 0) {
      for (int j = 0; j <= step; ++j)
        v[static_cast<std::size_t>(j)] = std::max(v[static_cast<std::size_t>(j)], intrinsic(step, j));
    }
  }
  return v[0];
}

}  // namespace strata::pricing
