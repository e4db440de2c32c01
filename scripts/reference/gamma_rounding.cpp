// The rounding of a finite-difference gamma, measured where its true value
// is 0: the continuous floating lookback call of inputs/pricing/greeks.toml
// (S0 = 100, r = 5%, q = 2%, vol = 25%, T = 1, 50 steps), whose payoff
// S_T - min S is linear in S0 on every path. docs/validation.md ("Rounding
// of the Greeks") records what it prints.
//
// Two estimators on the same Philox normals and GBM steps as strata's
// kernels (kernels/pricing/):
//   re-simulated: each bumped path from fl(ln(S0 +- h)) in Real, payoffs in
//     Real, coefficients (1, -2, 1) / h^2 (strata's before this release);
//   moved: the base path moved by exact log offsets and valued in double,
//     coefficients over the bumps the moved starts make, summing to 0
//     (models/pricing/greeks.cpp, the kernel's moved_values).
// Each in fp32 and fp64, with libm's exp or with exp2(x log2 e) (an exp a
// few ulp off, as device exps may be); the re-simulated one also splits
// off its start-rounding part, V (d+ - 2 d0 + d-) / h^2 to first order.
// Build it twice to see what FMA contraction does:
//   g++ -std=c++20 -O2 -march=x86-64-v3 -fopenmp -ffp-contract=off -I.
//       scripts/reference/gamma_rounding.cpp -o gamma_rounding && ./gamma_rounding [pairs]
// and again with -ffp-contract=fast.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/pricing/asset_models.hpp"
#include "kernels/pricing/closed_forms.hpp"
#include "kernels/pricing/path_group.hpp"

namespace {

using namespace strata::kernels::pricing;

bool g_exp2 = false;

template <class R>
R exp_of(R x) {
  return g_exp2 ? std::exp2(x * static_cast<R>(1.442695040888963407359924681001892137)) : std::exp(x);
}

// lookback_value of payoffs.hpp (continuous, floating call), exp pluggable.
template <class R>
double lookback(const R* x, int steps, R shift, double discount) {
  R hi = x[0], lo = x[0];
  for (int k = 1; k <= steps; ++k) {
    hi = x[k] > hi ? x[k] : hi;
    lo = x[k] < lo ? x[k] : lo;
  }
  return discount * static_cast<double>(exp_of<R>(x[steps]) - exp_of<R>(lo - shift));
}

struct Mean {
  long double sum = 0, squares = 0;
  long n = 0;
  void add(double v) { sum += v, squares += static_cast<long double>(v) * v, ++n; }
  double value() const { return static_cast<double>(sum / n); }
  double stderr_() const { return static_cast<double>(std::sqrt((squares / n - sum / n * (sum / n)) / (n - 1))); }
};

template <class Real>
void measure(long pairs) {
  const double s0 = 100.0, r = 0.05, q = 0.02, vol = 0.25, t = 1.0, h = 0.01 * s0;
  const int steps = 50;
  const double dt = t / steps, discount = std::exp(-r * t);
  const double shift = strata::kernels::kBgkBeta * vol * std::sqrt(dt);
  AssetStep<double> gbm{};
  gbm.model = AssetModel::gbm;
  gbm.log_spot = std::log(s0);
  gbm.carry = r - q;
  gbm.vol = vol;
  const AssetStep<Real> asset = gbm.template as<Real>();
  // Re-simulated: the starts and their roundings' second difference.
  Real start[3];
  for (int c = 0; c < 3; ++c) start[c] = static_cast<Real>(std::log(s0 + (c - 1) * h));
  long double lambda = 0;   // sum_c a_c e^{start_c - start_0} h^2
  for (int c = 0; c < 3; ++c)
    lambda += (c == 1 ? -2.0L : 1.0L) * std::exp(static_cast<long double>(start[c]) - static_cast<long double>(start[1]));
  // Moved: offsets, sizes and coefficients as greeks.cpp makes them.
  const double x0 = static_cast<double>(static_cast<Real>(std::log(s0)));
  double offset[3], size[3];
  for (int c = 0; c < 3; ++c) {
    offset[c] = c == 1 ? 0.0 : (x0 + std::log1p((c - 1) * h / std::exp(x0))) - x0;
    size[c] = static_cast<double>(std::exp(static_cast<long double>(x0 + offset[c])) - std::exp(static_cast<long double>(x0)));
  }
  const double hu = size[2], hd = -size[0];
  double up = 2.0 / (hu * (hu + hd)), down = 2.0 / (hd * (hu + hd));
  const double unit = std::ldexp(1.0, std::ilogb(up + down) - 51);
  up = std::nearbyint(up / unit) * unit;
  down = std::nearbyint(down / unit) * unit;
  const double coef[3] = {down, -(up + down), up};

  const auto key = strata::rng::philox_key(20261130);
  const Real rdt = static_cast<Real>(dt), rsq = static_cast<Real>(std::sqrt(dt));
  std::vector<Real> eps(steps), x(steps + 1);
  std::vector<double> moved(steps + 1);
  auto simulate = [&](Real x_start, Real sign) {
    x[0] = x_start;
    for (int k = 0; k < steps; ++k) {
      Real xk = x[k];
      gbm_step(asset, rdt, rsq, sign * eps[static_cast<std::size_t>(k)], xk);
      x[static_cast<std::size_t>(k) + 1] = xk;
    }
  };
  Mean resimulated, moved_mean;
  long double base_price = 0;
  for (long s = 0; s < pairs; ++s) {
    NormalStream<Real, 1> draw(key, static_cast<std::uint64_t>(s));
    for (Real& e : eps) draw(&e);
    double p_old[3] = {0, 0, 0}, p_new[3] = {0, 0, 0};
    for (int copy = 0; copy < 2; ++copy) {   // antithetic pair
      const Real sign = copy == 0 ? Real(1) : Real(-1);
      for (int c = 0; c < 3; ++c) {
        simulate(start[c], sign);
        p_old[c] += 0.5 * lookback<Real>(x.data(), steps, static_cast<Real>(shift), discount);
      }
      simulate(static_cast<Real>(x0), sign);
      for (int c = 0; c < 3; ++c) {
        for (int k = 0; k <= steps; ++k) moved[static_cast<std::size_t>(k)] = static_cast<double>(x[static_cast<std::size_t>(k)]) + offset[c];
        p_new[c] += 0.5 * lookback<double>(moved.data(), steps, shift, discount);
      }
    }
    // In the kernel's order: the base term first.
    double g_old = 0.0, g_new = 0.0;
    g_old += -2.0 / (h * h) * p_old[1];
    g_old += 1.0 / (h * h) * p_old[2];
    g_old += 1.0 / (h * h) * p_old[0];
    g_new += coef[1] * p_new[1];
    g_new += coef[2] * p_new[2];
    g_new += coef[0] * p_new[0];
    resimulated.add(g_old);
    moved_mean.add(g_new);
    base_price += p_old[1];
  }
  const double starts = static_cast<double>(base_price / pairs * lambda) / (h * h);
  std::printf("%s, %s exp: re-simulated %.4e +- %.2e (starts %.4e, rest %.3e); moved %.4e +- %.2e\n",
              sizeof(Real) == 4 ? "fp32" : "fp64", g_exp2 ? "exp2-based" : "libm", resimulated.value(),
              resimulated.stderr_(), starts, resimulated.value() - starts, moved_mean.value(), moved_mean.stderr_());
}

}  // namespace

int main(int argc, char** argv) {
  const long pairs = argc > 1 ? std::atol(argv[1]) : 100000;
  for (bool e : {false, true}) {
    g_exp2 = e;
    measure<float>(pairs);
    measure<double>(pairs);
  }
}
