// The host's batched path-group kernel (PathGroupKernel::host_for: kBatch
// lanes in `omp simd` loops) against PathGroupKernel lane by lane: the same samples in each lane, in the same
// order, for correlated GBM, Heston and Merton assets, antithetic pairs, a control variate and
// payoffs of both its vector forms (Asian, European) and the lane-by-lane
// fallback (barrier, basket, lookback).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "engine/backend/parallel.hpp"
#include "kernels/pricing/path_group.hpp"

using namespace strata;
using namespace strata::kernels::pricing;

namespace {

template <class Real>
PayoffSpec<Real> payoff(PayoffKind kind, int asset, bool call, double strike, double maturity) {
  PayoffSpec<Real> s{};
  s.kind = kind;
  s.asset = asset;
  s.call = call;
  s.strike = static_cast<Real>(strike);
  s.discount = std::exp(-0.03 * maturity);
  return s;
}

// Lane moments of both kernels for one block and a short one (1000
// samples), 12 monthly steps on two correlated assets of the given models.
template <class Real>
void check_batched_matches(AssetModel model0, AssetModel model1, double margin1, double margin2) {
  constexpr int steps = 12, n_assets = 2;
  const std::int64_t n_samples = kSamplesPerBlock + 1000, n_lanes = 2 * kLanes;
  std::vector<AssetStep<Real>> assets(2, AssetStep<Real>{});
  assets[0].log_spot = static_cast<Real>(std::log(100.0));
  assets[0].carry = Real(0.03);
  assets[0].vol = Real(0.25);
  assets[1].log_spot = static_cast<Real>(std::log(50.0));
  assets[1].carry = Real(0.02);
  assets[1].vol = Real(0.4);
  assets[0].model = model0;
  assets[1].model = model1;
  for (auto& a : assets) {
    // Heston: a variance of 4% reverting at 1.5 with vol-of-vol 0.5, psi
    // on both sides of QE's switch at 1.5.
    a.v0 = a.theta = Real(0.04);
    a.kappa = Real(1.5);
    a.xi = Real(0.5);
    a.rho = Real(-0.7);
    // Merton: about one jump a year, 8% of the monthly steps jump, 0.3%
    // twice or more.
    a.jump_intensity = Real(1);
    a.jump_mean = Real(-0.1);
    a.jump_vol = Real(0.15);
  }
  const std::vector<Real> cholesky{Real(1), Real(0), Real(0.5), static_cast<Real>(std::sqrt(0.75))};
  std::vector<Real> dt(steps, static_cast<Real>(1.0 / steps)),
      sqrt_dt(steps, static_cast<Real>(std::sqrt(1.0 / steps)));
  std::vector<int> fix_steps;
  std::vector<double> discount_at;
  for (int k = 1; k <= steps; ++k) {
    fix_steps.push_back(k);
    discount_at.push_back(std::exp(-0.03 * k / steps));
  }
  const std::vector<Real> weights{Real(0.5), Real(1)};

  std::vector<PayoffSpec<Real>> specs, controls;
  specs.push_back(payoff<Real>(PayoffKind::asian, 0, true, 100.0, 1.0));
  specs.back().fixings = steps;
  controls.push_back(specs.back());
  controls.back().geometric = true;
  specs.push_back(payoff<Real>(PayoffKind::asian, 1, false, 50.0, 1.0));
  specs.back().geometric = true;
  specs.back().fixings = steps;
  specs.push_back(payoff<Real>(PayoffKind::european, 1, true, 55.0, 1.0));
  specs.push_back(payoff<Real>(PayoffKind::barrier, 0, true, 100.0, 1.0));
  specs.back().continuous = true;
  specs.back().rebate = Real(2);
  specs.back().log_barrier = static_cast<Real>(std::log(85.0));
  specs.push_back(payoff<Real>(PayoffKind::basket, 0, true, 100.0, 1.0));
  specs.push_back(payoff<Real>(PayoffKind::lookback, 1, true, 0.0, 1.0));
  specs.back().floating = true;
  specs.back().continuous = true;
  while (controls.size() < specs.size()) controls.push_back(specs[controls.size()]);
  const std::vector<double> beta{0.9, 0, 0, 0, 0, 0}, control_mean{4.0, 0, 0, 0, 0, 0};
  const std::vector<double> shifts{5.0, 3.0, 6.0, 8.0, 9.0, 10.0};
  const int n_payoffs = static_cast<int>(specs.size());

  PathGroupKernel<Real> k{};
  k.paths.key = rng::philox_key(2024);
  k.paths.first_block = 0;
  k.paths.n_samples = n_samples;
  k.paths.n_lanes = n_lanes;
  k.paths.steps = steps;
  k.paths.n_assets = n_assets;
  k.paths.antithetic = true;
  k.paths.correlated = true;
  k.paths.assets = assets.data();
  k.paths.cholesky = cholesky.data();
  k.paths.dt = dt.data();
  k.paths.sqrt_dt = sqrt_dt.data();
  k.payoffs.fix_steps = fix_steps.data();
  k.payoffs.weights = weights.data();
  k.paths.discount_at = discount_at.data();
  k.payoffs.specs = specs.data();
  k.payoffs.shifts = shifts.data();
  k.payoffs.n_payoffs = n_payoffs;
  k.payoffs.beta = beta.data();
  k.payoffs.controls = controls.data();
  k.payoffs.control_mean = control_mean.data();
  const std::size_t cells = static_cast<std::size_t>(n_lanes) * (steps + 1) * n_assets * 2;
  auto run = [&](bool batched) {
    std::vector<Real> paths(cells), variance(cells);
    std::vector<double> lanes(static_cast<std::size_t>(n_payoffs * kMoments * n_lanes), -1.0);
    PathGroupKernel<Real> kk = k;
    kk.paths.paths = paths.data();
    kk.paths.variance = variance.data();
    kk.payoffs.lanes = lanes.data();
    if (batched) {
      kk.host_for(n_lanes);
    } else {
      host::parallel_for(n_lanes, kk);
    }
    return lanes;
  };
  const std::vector<double> scalar = run(false), batched = run(true);
  for (int q = 0; q < n_payoffs; ++q) {
    for (int m = 0; m < kMoments; ++m) {
      for (std::int64_t i = 0; i < n_lanes; ++i) {
        const std::size_t at = static_cast<std::size_t>((kMoments * q + m) * n_lanes + i);
        INFO("payoff " << q << ", moment " << m << ", lane " << i);
        CHECK(batched[at] == Approx(scalar[at]).margin(m == 0 ? margin1 : margin2).epsilon(0));
      }
    }
  }
}

}  // namespace

TEST_CASE("the batched path-group kernel adds the path-group kernel's samples", "[pricing][reproducible]") {
  // The kernels differ only in libmvec's log/cos/sin/exp (within 4 ulp of
  // libm's). That moves a log price by a few ulp per step, so a payoff of
  // size P by about 12 steps x 4 ulp x P: in double 5e-14 relative, below
  // 1e-11 for P <= 100, and 64 samples a lane below 1e-9 in the sum, 2e-7
  // in the sum of squares (2 P per unit of error); in float (ulp 6e-8)
  // 3e-6 relative, 3e-4 a sample, 0.02 and 4 in the sums, taken with a
  // factor 2.5 of room. A lane that read another sample, or dropped one,
  // moves its sums by the payoff's spread (1 to 30) per sample.
  const AssetModel gbm = AssetModel::gbm, qe = AssetModel::heston_qe, ft = AssetModel::heston_full_truncation;
  SECTION("GBM") {
    check_batched_matches<double>(gbm, gbm, 1e-9, 2e-7);
    check_batched_matches<float>(gbm, gbm, 0.05, 10.0);
  }
  // Heston: libmvec's erfc and log too. QE switches schemes at psi = 1.5,
  // a jump in the next variance: in fp32 a few ulp move psi across it in
  // about 1e-6 of the steps, ~1 of this test's 8e5, so QE is compared in
  // fp64 only (1e-15 of the steps).
  SECTION("Heston") {
    check_batched_matches<double>(qe, ft, 1e-9, 2e-7);
    check_batched_matches<float>(ft, ft, 0.05, 10.0);
  }
  // Merton: libmvec's erfc gives the jump count's uniform; a few ulp move
  // it across a Poisson cdf step (a whole jump) as rarely as psi across
  // QE's switch, so fp64 only.
  SECTION("Merton") { check_batched_matches<double>(AssetModel::merton, gbm, 1e-9, 2e-7); }
}
