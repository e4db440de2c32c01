// The pathwise derivatives (kernels/pricing/pathwise.hpp) of every
// Lipschitz payoff equal central differences of the payoff itself on the
// same normals with the spot or the vol bumped: a deterministic check, path
// by path, of each payoff's tangent (the end-to-end test checks the
// averages against closed forms only where one exists).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/pricing/closed_forms.hpp"
#include "kernels/pricing/pathwise.hpp"
#include "kernels/pricing/payoffs.hpp"

using strata::kernels::pricing::BasketKind;
using strata::kernels::pricing::PathTangent;
using strata::kernels::pricing::PathView;
using strata::kernels::pricing::PayoffKind;
using strata::kernels::pricing::PayoffSpec;

namespace {

constexpr int kSteps = 24, kAssets = 3;
constexpr double kT = 1.0, kRate = 0.04;

// GBM paths of three independent assets from fixed normals.
struct Paths {
  double spot[kAssets] = {100.0, 90.0, 110.0};
  double vol[kAssets] = {0.2, 0.3, 0.25};
  double carry[kAssets] = {0.04, 0.03, 0.04};
  std::vector<double> x, var, times;
  std::vector<int> fix_steps;
  std::vector<double> weights = {0.5, 0.3, 0.2};

  PathView<double> build() {
    const double dt = kT / kSteps;
    x.assign((kSteps + 1) * kAssets, 0.0);
    var.assign((kSteps + 1) * kAssets, 0.0);
    times.clear();
    for (int k = 1; k <= kSteps; ++k) times.push_back(k * dt);
    fix_steps = {4, 8, 12, 16, 20, 24};
    for (int a = 0; a < kAssets; ++a) {
      x[a] = std::log(spot[a]);
      for (int k = 0; k < kSteps; ++k) {
        // A fixed, irregular sequence of normals (no kink hit exactly).
        const double z = std::sin(1.7 * k + 2.3 * a + 0.4) * 1.3;
        x[(k + 1) * kAssets + a] =
            x[k * kAssets + a] + (carry[a] - 0.5 * vol[a] * vol[a]) * dt + vol[a] * std::sqrt(dt) * z;
        var[k * kAssets + a] = vol[a] * vol[a] * dt;
      }
    }
    return PathView<double>{x.data(), var.data(), 1, kAssets, kSteps, fix_steps.data(), weights.data(), nullptr,
                            nullptr};
  }
};

// The paths of Paths with what a valuation of them reads besides: their
// fp32 copy, discount factors and exercise coefficients that make an
// American's policy bind.
struct ValuedPaths {
  Paths p;
  PathView<double> base = p.build();
  std::vector<float> xf = std::vector<float>(p.x.begin(), p.x.end());
  std::vector<float> varf = std::vector<float>(p.var.begin(), p.var.end());
  std::vector<double> discount_at = discounts(), exercise = coefficients();

  static std::vector<double> discounts() {
    std::vector<double> d(kSteps);
    for (int k = 0; k < kSteps; ++k) d[static_cast<std::size_t>(k)] = std::exp(-kRate * (k + 1) * kT / kSteps);
    return d;
  }
  static std::vector<double> coefficients() {
    std::vector<double> e(6 * 3, 0.0);
    for (int f = 0; f < 6; ++f) e[static_cast<std::size_t>(3 * f)] = 2.0 + f;
    return e;
  }
};

PayoffSpec<double> spec(PayoffKind kind, bool call, double strike) {
  PayoffSpec<double> s{};
  s.kind = kind;
  s.call = call;
  s.strike = strike;
  s.discount = std::exp(-kRate * kT);
  s.fixings = 6;
  s.continuous = true;
  return s;
}

// Payoff with asset a's spot (vol: its vol) moved by h; the lookback's BGK
// shift moves with its vol.
double bumped(PayoffSpec<double> s, int a, bool vol, double h) {
  Paths p;
  (vol ? p.vol[a] : p.spot[a]) += h;
  const PathView<double> v = p.build();
  if (s.kind == PayoffKind::lookback && s.continuous) {
    s.lookback_shift = strata::kernels::kBgkBeta * p.vol[s.asset] * std::sqrt(kT / kSteps);
  }
  return strata::kernels::pricing::path_payoff(s, v);
}

void check(const char* name, PayoffSpec<double> s) {
  Paths p;
  const PathView<double> v = p.build();
  if (s.kind == PayoffKind::lookback && s.continuous) {
    s.lookback_shift = strata::kernels::kBgkBeta * p.vol[s.asset] * std::sqrt(kT / kSteps);
  }
  for (int a = 0; a < kAssets; ++a) {
    for (bool vol : {false, true}) {
      // h = 1e-5 of the input: truncation h^2 f'''/6 and rounding
      // 1e-16 f / h are below 1e-8 of f' on these smooth stretches.
      const double h = 1e-5 * (vol ? p.vol[a] : p.spot[a]);
      const double fd = (bumped(s, a, vol, h) - bumped(s, a, vol, -h)) / (2 * h);
      const PathTangent<double> d{a, vol, false, 1.0 / p.spot[a], p.carry[a] + 0.5 * p.vol[a] * p.vol[a], p.vol[a]};
      const double pw = strata::kernels::pricing::pathwise_payoff(s, v, p.times.data(), d);
      INFO(name << ", asset " << a << (vol ? " vol" : " spot") << ": pathwise " << pw << ", difference " << fd);
      CHECK(pw == Approx(fd).epsilon(1e-6).margin(1e-9));
    }
  }
}

}  // namespace

TEST_CASE("pathwise derivatives equal differences of the payoff on the same normals", "[greeks]") {
  for (bool call : {true, false}) {
    check("european", spec(PayoffKind::european, call, call ? 95.0 : 115.0));
    for (bool geometric : {false, true}) {
      PayoffSpec<double> asian = spec(PayoffKind::asian, call, call ? 95.0 : 115.0);
      asian.geometric = geometric;
      check(geometric ? "geometric asian" : "arithmetic asian", asian);
      PayoffSpec<double> basket = spec(PayoffKind::basket, call, call ? 90.0 : 120.0);
      basket.geometric = geometric;
      check(geometric ? "geometric basket" : "arithmetic basket", basket);
    }
    for (BasketKind kind : {BasketKind::max, BasketKind::min}) {
      PayoffSpec<double> basket = spec(PayoffKind::basket, call, kind == BasketKind::max ? 100.0 : 90.0);
      basket.basket = kind;
      check(kind == BasketKind::max ? "basket max" : "basket min", basket);
    }
    for (bool continuous : {true, false}) {
      for (bool floating : {true, false}) {
        PayoffSpec<double> lb = spec(PayoffKind::lookback, call, call ? 90.0 : 120.0);
        lb.continuous = continuous;
        lb.floating = floating;
        check(continuous ? "continuous lookback" : "discrete lookback", lb);
      }
    }
  }
}

TEST_CASE("a spot bump's moved view values a path as a moved copy of it in double would", "[greeks]") {
  // The kernel values a spot bump on the base path read in double with the
  // bumped asset's log prices moved as they are read (PathView<double, Real>
  // with moved_asset); it used to copy the path to double and move the copy.
  // Both must give the same bits for every payoff kind, from an fp32 path
  // and an fp64 one, the asset moved or another; one continuous barrier and
  // lookback step each read the variances too. Discount factors and
  // exercise coefficients make the American's policy bind.
  const ValuedPaths v;
  const Paths& p = v.p;
  const PathView<double>& base = v.base;
  const std::vector<float>&xf = v.xf, &varf = v.varf;
  const std::vector<double>&discount_at = v.discount_at, &exercise = v.exercise;
  const double offset = std::ldexp(3.0, -20);   // a spot bump's log offset: a few ulp of the start's in fp32
  auto check = [&](const auto& stored, const auto& variance) {
    for (int moved_asset = 0; moved_asset < kAssets; ++moved_asset) {
      // The copy: every cell in double, the moved asset's log prices moved.
      std::vector<double> x(p.x.size()), var(p.var.size());
      for (std::size_t j = 0; j < x.size(); ++j) {
        x[j] = static_cast<double>(stored[j]) + (static_cast<int>(j % kAssets) == moved_asset ? offset : 0.0);
        var[j] = static_cast<double>(variance[j]);
      }
      const PathView<double> copy{x.data(), var.data(), 1, kAssets, kSteps, base.fix_steps, base.weights,
                                  discount_at.data(), exercise.data()};
      using Stored = std::remove_cvref_t<decltype(stored[0])>;
      const PathView<double, Stored> view{stored.data(), variance.data(), 1, kAssets, kSteps, base.fix_steps,
                                          base.weights, discount_at.data(), exercise.data(), moved_asset, offset};
      for (PayoffKind kind : {PayoffKind::european, PayoffKind::digital, PayoffKind::asian, PayoffKind::barrier,
                              PayoffKind::lookback, PayoffKind::basket, PayoffKind::american}) {
        for (bool call : {true, false}) {
          PayoffSpec<double> s = spec(kind, call, 100.0);
          s.asset = kind == PayoffKind::basket || kind == PayoffKind::american ? 0 : moved_asset;
          s.log_barrier = std::log(call ? 125.0 : 80.0);
          s.up = call;
          s.degree = 2;
          s.lookback_shift = 0.01;
          INFO("kind " << static_cast<int>(kind) << ", call " << call << ", asset " << moved_asset << ", "
                       << sizeof(Stored) << "-byte path");
          const double want = strata::kernels::pricing::path_payoff(s, copy);
          const double got = strata::kernels::pricing::path_payoff(s, view);
          CHECK(std::memcmp(&want, &got, sizeof want) == 0);
        }
      }
    }
  };
  check(p.x, p.var);
  check(xf, varf);
}

TEST_CASE("an American on several spot bumps in one pass gives each bump's bits on its own", "[greeks]") {
  // The kernel values an American on all the spot bumps of a path in one
  // pass (american_values), each date's cells read once; each bump must
  // come out as american_value on its own moved view, bit for bit: each
  // asset up and down and the gammas' middle point (asset 0, offset 0), a
  // basket of three assets and one asset alone, a call and a put, from an
  // fp32 path and an fp64 one. The exercise coefficients make the policy
  // bind at different dates for different bumps.
  using strata::kernels::pricing::SpotShift;
  const ValuedPaths v;
  const Paths& p = v.p;
  const PathView<double>& base = v.base;
  const std::vector<float>&xf = v.xf, &varf = v.varf;
  const std::vector<double>&discount_at = v.discount_at, &exercise = v.exercise;
  auto check = [&](const auto& stored, const auto& variance) {
    using Stored = std::remove_cvref_t<decltype(stored[0])>;
    for (int assets : {kAssets, 1}) {   // one asset: asset 0's cells, kAssets apart
      std::vector<SpotShift> shifts;
      for (int a = 0; a < assets; ++a) {
        shifts.push_back({a, std::ldexp(3.0, -8)});
        shifts.push_back({a, -std::ldexp(5.0, -8)});
        if (a == 0) shifts.push_back({0, 0.0});
      }
      const auto n = static_cast<int>(shifts.size());
      const PathView<double, Stored> view{stored.data(), variance.data(), assets == 1 ? kAssets : 1, assets, kSteps,
                                          base.fix_steps, base.weights, discount_at.data(), exercise.data()};
      for (bool call : {true, false}) {
        PayoffSpec<double> s = spec(PayoffKind::american, call, call ? 85.0 : 115.0);   // in the money
        s.degree = 2;
        const std::vector<PayoffSpec<double>> specs(static_cast<std::size_t>(n), s);
        std::vector<double> got(static_cast<std::size_t>(n));
        strata::kernels::pricing::american_values<kAssets>(specs.data(), 1, shifts.data(), n, view, got.data());
        int exercised = 0;
        for (int c = 0; c < n; ++c) {
          PathView<double, Stored> moved = view;
          moved.moved_asset = shifts[static_cast<std::size_t>(c)].asset;
          moved.moved_offset = shifts[static_cast<std::size_t>(c)].log_offset;
          const double want = strata::kernels::pricing::path_payoff(s, moved);
          INFO("bump " << c << ", " << assets << " assets, call " << call << ", " << sizeof(Stored) << "-byte path");
          CHECK(std::memcmp(&want, &got[static_cast<std::size_t>(c)], sizeof want) == 0);
          exercised += want > 0.0;
        }
        CHECK(exercised > 0);   // not all zeros: the policy and the payoff bind
      }
    }
  };
  check(p.x, p.var);
  check(xf, varf);
}
