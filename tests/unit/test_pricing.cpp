// The pricing kernels and their reduction, on every backend and precision:
// closed forms within statistical error, and results that do not depend on
// how the work is cut.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/backend/buffer.hpp"
#include "models/pricing/kernels.hpp"
#include "kernels/pricing/black_scholes.hpp"
#include "kernels/pricing/european.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "models/pricing/greeks.hpp"
#include "models/pricing/monte_carlo.hpp"
#include "models/pricing/references.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;
using namespace strata::pricing;

namespace {

Portfolio sample_portfolio(std::int64_t paths, bool antithetic) {
  Portfolio p;
  p.rate = 0.03;
  p.paths = paths;
  p.antithetic = antithetic;
  p.seed = 1234;
  p.assets = {{"A", 100.0, 0.01, 0.25, "gbm"}, {"B", 50.0, 0.0, 0.5, "gbm"}};
  p.instruments = {{"call", "european", true, 105.0, 1.0, 0},
                   {"put", "european", false, 95.0, 0.5, 0},
                   {"otm_call", "european", true, 80.0, 2.0, 1}};
  return p;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Second moment of the discounted call payoff under GBM, from
//   E[(S-K)^2 1{S>K}] = E[S^2 1{S>K}] - 2K E[S 1{S>K}] + K^2 P(S>K)
// with E[S^a 1{S>K}] = S0^a e^{a(r-q)T + a(a-1) sigma^2 T/2} N(d2 + a sigma sqrt T).
double call_payoff_variance(double s, double k, double r, double q, double vol, double t) {
  const double sd = vol * std::sqrt(t);
  const double d2 = (std::log(s / k) + (r - q - 0.5 * vol * vol) * t) / sd;
  const double m1 = s * std::exp((r - q) * t) * kernels::normal_cdf(d2 + sd);
  const double m2 = s * s * std::exp(2 * (r - q) * t + vol * vol * t) * kernels::normal_cdf(d2 + 2 * sd);
  const double second = m2 - 2 * k * m1 + k * k * kernels::normal_cdf(d2);
  const double df = std::exp(-r * t);
  const double mean = kernels::black_scholes(true, s, k, r, q, vol, t);
  return df * df * second - mean * mean;
}

}  // namespace

TEST_CASE("European prices agree with Black-Scholes on every backend and precision", "[pricing]") {
  // 4 sigma per price: with 12 price checks below the chance of a false
  // failure is about 12 * 6.3e-5 < 1e-3, for any seed.
  const double z = 4.0;
  for (const Device& d : test::devices()) {
    for (Precision prec : {Precision::fp64, Precision::fp32}) {
      for (bool antithetic : {false, true}) {
        const Portfolio p = sample_portfolio(1 << 20, antithetic);
        const SamplePlan plan = plan_samples(p, d, test::world());
        const auto est = price_portfolio(p, plan, d, prec, test::world());
        for (std::size_t i = 0; i < est.size(); ++i) {
          INFO(test::describe(d, prec) << (antithetic ? " antithetic " : " ") << p.instruments[i].name);
          const double ref = reference_for(p, p.instruments[i])->price;
          CHECK(std::fabs(est[i].price - ref) <= z * est[i].standard_error);
          CHECK(est[i].paths == (1 << 20));
        }
      }
    }
  }
}

TEST_CASE("the standard error matches the analytic payoff variance", "[pricing]") {
  // The sample variance s^2 of n iid payoffs has relative standard deviation
  // sqrt((kurtosis - 1)/n), so s has half that. This payoff's kurtosis is
  // about 11 (a 2e7-sample estimate); bounding it by 20, with n = 2^20 the
  // estimated standard error is within 5 * 0.5 * sqrt(19/n) = 1.06% of the
  // truth at 5 sigma.
  Portfolio p = sample_portfolio(1 << 20, false);
  p.instruments = {{"call", "european", true, 105.0, 1.0, 0}};
  const SamplePlan plan = plan_samples(p, test::devices().front(), test::world());
  const auto est = price_portfolio(p, plan, test::devices().front(), Precision::fp64, test::world());
  const double var = call_payoff_variance(100.0, 105.0, 0.03, 0.01, 0.25, 1.0);
  const double expected_se = std::sqrt(var / static_cast<double>(1 << 20));
  CHECK(est[0].standard_error == Approx(expected_se).epsilon(0.0106));
}

TEST_CASE("antithetic pairs reduce the variance of a monotone payoff", "[pricing]") {
  // For the same number of paths the antithetic estimator of a monotone
  // payoff has a smaller variance (Glasserman 2004, sec. 4.2).
  const Device d = test::devices().front();
  const Portfolio plain = sample_portfolio(1 << 18, false);
  const Portfolio anti = sample_portfolio(1 << 18, true);
  const auto a = price_portfolio(plain, plan_samples(plain, d, test::world()), d, Precision::fp64, test::world());
  const auto b = price_portfolio(anti, plan_samples(anti, d, test::world()), d, Precision::fp64, test::world());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(b[i].standard_error < a[i].standard_error);
}

TEST_CASE("prices are bitwise independent of the chunk size", "[pricing][reproducible]") {
  for (const Device& d : test::devices()) {
    for (Precision prec : {Precision::fp64, Precision::fp32}) {
      INFO(test::describe(d, prec));
      Portfolio p = sample_portfolio(300'001, false);   // not a multiple of the block size
      p.chunk_paths = 0;
      const auto ref = price_portfolio(p, plan_samples(p, d, test::world()), d, prec, test::world());
      for (std::int64_t chunk : {1, 16384, 50'000, 1'000'000}) {
        p.chunk_paths = chunk;
        const auto got = price_portfolio(p, plan_samples(p, d, test::world()), d, prec, test::world());
        for (std::size_t i = 0; i < got.size(); ++i) {
          CHECK(same_bits(got[i].price, ref[i].price));
          CHECK(same_bits(got[i].standard_error, ref[i].standard_error));
        }
      }
    }
  }
}

TEST_CASE("block moments equal a direct sum in the documented order", "[pricing][reproducible]") {
  // Recompute one short block on the host by the definition: lane l adds
  // samples l, l + kLanes, ... in order; lanes combine by a pairwise tree.
  using namespace strata::kernels::pricing;
  const Portfolio p = sample_portfolio(kSamplesPerBlock + 1000, false);
  EuropeanGbm<double> g{};
  g.key = rng::philox_key(p.seed);
  g.asset = 0;
  g.call = true;
  g.antithetic = false;
  g.spot = 100.0;
  g.strike = 105.0;
  g.drift = (0.03 - 0.01 - 0.5 * 0.25 * 0.25) * 1.0;
  g.diffusion = 0.25;
  g.discount = std::exp(-0.03);
  const std::int64_t n = kSamplesPerBlock + 1000;   // block 1 holds 1000 samples

  std::vector<double> lane(kLanes * kMoments, 0.0);
  for (std::int64_t l = 0; l < kLanes; ++l) {
    for (std::int64_t s = kSamplesPerBlock + l; s < n; s += kLanes) {
      double x;
      g.values<1, rng::ScalarMath>(s, &x);
      x -= 1.5;
      lane[kMoments * l] += x;
      lane[kMoments * l + 1] += x * x;
    }
  }
  for (std::int64_t half = kLanes / 2; half > 0; half /= 2) {
    for (std::int64_t l = 0; l < half; ++l) {
      for (int m = 0; m < kMoments; ++m) lane[kMoments * l + m] += lane[kMoments * (l + half) + m];
    }
  }

  for (const Device& d : test::devices()) {
    INFO(to_string(d.backend));
    Buffer<double> lanes(d, kLanes * kMoments), blocks(d, kMoments);
    parallel_for(d, kLanes, LaneMoments<EuropeanGbm<double>>{g, 1, n, 1.5, lanes.data()});
    parallel_for(d, 1, LaneTree{lanes.data(), blocks.data()});
    double got[kMoments];
    blocks.copy_to_host(got, kMoments);
    if (d.backend == Backend::host) {
      CHECK(same_bits(got[0], lane[0]));
      CHECK(same_bits(got[1], lane[1]));
    } else {
      // exp/log/sincos differ between libm and CUDA's by a few ulp.
      CHECK(got[0] == Approx(lane[0]).epsilon(1e-9));
      CHECK(got[1] == Approx(lane[1]).epsilon(1e-9));
    }
  }
}

template <class Real>
void check_batch_matches_scalar(Real tolerance) {
  using namespace strata::kernels::pricing;
  EuropeanGbm<Real> g{};
  g.key = rng::philox_key(99);
  g.spot = Real(100);
  g.strike = Real(104);
  g.drift = Real((0.03 - 0.01 - 0.5 * 0.3 * 0.3) * 2.0);
  g.diffusion = Real(0.3 * std::sqrt(2.0));
  g.discount = std::exp(-0.06);
  // Assets 0..3 reach every Philox word pair and both Box-Muller halves.
  for (std::uint32_t asset = 0; asset < 4; ++asset) {
    for (bool call : {true, false}) {
      for (bool antithetic : {false, true}) {
        INFO("asset " << asset << (call ? " call" : " put") << (antithetic ? " antithetic" : ""));
        g.asset = asset;
        g.call = call;
        g.antithetic = antithetic;
        for (std::int64_t first : {std::int64_t{0}, std::int64_t{16}, std::int64_t{123'456'784}}) {
          double out[kBatch];
          g.template values<kBatch, rng::LaneMath>(first, out);
          for (int w = 0; w < kBatch; ++w) {
            double scalar;
            g.template values<1, rng::ScalarMath>(first + w, &scalar);
            CHECK(std::abs(out[w] - scalar) <= tolerance);
          }
        }
      }
    }
  }
}

TEST_CASE("the host's batched European sampler draws what the scalar one does", "[pricing]") {
  // Same Philox words and formulas; only log, cos/sin and exp may come from
  // libmvec (within 4 ulp) instead of libm. A few ulp of S_T ~ 100 bound
  // the payoff difference: 1e-11 in double (ulp 1.4e-14 at 100), 1e-4 in
  // float (ulp 7.6e-6 at 100), with room for |Z| up to 8.6 scaling the
  // error of exp's argument.
  check_batch_matches_scalar<double>(1e-11);
  check_batch_matches_scalar<float>(1e-4f);
}

TEST_CASE("batched lane moments equal lane moments up to the samples' rounding", "[pricing][reproducible]") {
  // One full block and a short one (1000 samples): the batched form must
  // give each lane the same samples in the same order.
  using namespace strata::kernels::pricing;
  EuropeanGbm<double> g{};
  g.key = rng::philox_key(7);
  g.asset = 1;
  g.call = true;
  g.spot = 100.0;
  g.strike = 100.0;
  g.drift = 0.05 - 0.02;
  g.diffusion = 0.2;
  g.discount = std::exp(-0.05);
  const std::int64_t n = kSamplesPerBlock + 1000;
  std::vector<double> scalar(2 * kLanes * kMoments), batched(2 * kLanes * kMoments);
  host::parallel_for(2 * kLanes, LaneMoments<EuropeanGbm<double>>{g, 0, n, 8.0, scalar.data()});
  LaneMomentsBatched<EuropeanGbm<double>>{{g, 0, n, 8.0, batched.data()}}.host_for(2 * kLanes);
  for (std::size_t k = 0; k < scalar.size(); ++k) {
    // A lane sums 64 samples of size ~10: 1e-9 is ~1e4 ulp of the sums.
    CHECK(batched[k] == Approx(scalar[k]).epsilon(1e-9).margin(1e-9));
  }
}

TEST_CASE("path-group prices are bitwise independent of the chunk size", "[pricing][reproducible]") {
  // A group whose launches the working-memory budget does not cut, and one
  // (a long grid with antithetic pairs) that it may: same bits either way.
  for (const Device& d : test::devices()) {
    for (Precision prec : {Precision::fp64, Precision::fp32}) {
      INFO(test::describe(d, prec));
      Portfolio p = sample_portfolio(70'001, true);
      p.steps_per_year = 50;
      Instrument asian{"asian", "asian", true, 100.0, 1.0, 0};
      asian.fixings = 4;
      Instrument barrier{"barrier", "barrier", false, 100.0, 2.0, 0};
      barrier.barrier = 80.0;
      barrier.rebate = 1.0;
      Instrument lookback{"lookback", "lookback", true, 0.0, 1.0, 1};
      lookback.floating = true;
      p.instruments = {asian, barrier, lookback};
      p.chunk_paths = 0;
      const auto ref = price_portfolio(p, plan_samples(p, d, test::world()), d, prec, test::world());
      for (std::int64_t chunk : {1, 40'000}) {
        p.chunk_paths = chunk;
        const auto got = price_portfolio(p, plan_samples(p, d, test::world()), d, prec, test::world());
        for (std::size_t i = 0; i < got.size(); ++i) {
          CHECK(same_bits(got[i].price, ref[i].price));
          CHECK(same_bits(got[i].standard_error, ref[i].standard_error));
        }
      }
    }
  }
}

TEST_CASE("a spot bump's differences: exact log offsets, coefficients summing to 0, exact for quadratics",
          "[pricing][greeks]") {
  // Spot bumps move the base path by exact log offsets, and the second
  // difference is taken over the bumps that makes of the path's own spot
  // e^{x0}, x0 = ln S0 in the run's precision (greeks.cpp). Spots 36 and
  // 1.5 (ln S0 in other binades), a barrier whose delta is a central
  // difference too, and vega first so that its vol scenarios come first
  // unless spot bumps are put before them.
  Portfolio p;
  p.rate = 0.05;
  p.paths = 1;
  p.steps_per_year = 12;
  p.greeks = {"vega", "gamma", "delta"};
  p.assets = {{"A", 36.0, 0.0, 0.2, "gbm"}, {"B", 1.5, 0.01, 0.3, "gbm"}};
  Instrument barrier{"barrier", "barrier", true, 36.0, 1.0, 0};
  barrier.barrier = 30.0;
  p.instruments = {barrier, {"call", "european", true, 1.5, 1.0, 1}};
  for (Precision prec : {Precision::fp64, Precision::fp32}) {
    for (const PathGroup& g : path_groups(p)) {
      const double spot = p.assets[static_cast<std::size_t>(g.assets[0])].spot;
      INFO(to_string(prec) << ", spot " << spot);
      const double x0 = prec == Precision::fp32 ? static_cast<double>(static_cast<float>(std::log(spot))) : std::log(spot);
      const GreekPlan plan = plan_greeks(p, g, prec);
      // The path's spot after a scenario (the base: e^{x0}).
      auto moved_spot = [&](int scenario) {
        const double offset = scenario == 0 ? 0.0 : plan.scenarios[static_cast<std::size_t>(scenario - 1)].log_offset;
        return std::exp(static_cast<long double>(x0 + offset));
      };
      bool other_input = false;
      for (const Bump& b : plan.scenarios) {
        if (b.input != BumpedInput::spot) {
          other_input = true;
          continue;
        }
        CHECK_FALSE(other_input);   // spot bumps first: they read the base path
        CHECK((x0 + b.log_offset) - x0 == b.log_offset);
        const long double size = std::exp(static_cast<long double>(x0 + b.log_offset)) - std::exp(static_cast<long double>(x0));
        CHECK(b.size == Approx(static_cast<double>(size)).epsilon(1e-15));
      }
      for (std::size_t slot = 0; slot < plan.slots.size(); ++slot) {
        const std::string& name = plan.slots[slot].name;
        if (name != "gamma" && name != "delta") continue;
        INFO(name);
        std::vector<kernels::pricing::GreekTerm> terms;
        for (const kernels::pricing::GreekTerm& t : plan.terms) {
          if (t.greek == static_cast<int>(slot)) terms.push_back(t);
        }
        if (terms.front().tangent >= 0) continue;   // the call's delta is pathwise
        REQUIRE(terms.size() == (name == "gamma" ? 3u : 2u));
        // sum a_c f(S_c) for f = 1, S - e^{x0}, (S - e^{x0})^2 / 2: 0, then
        // the Greek's own (delta: 1; gamma: 0), then (gamma: 1). The
        // coefficients' rounding (2^-52 of each) bounds the linear term.
        double sum = 0.0;
        long double linear = 0, quadratic = 0, weight = 0;
        for (const kernels::pricing::GreekTerm& t : terms) {
          REQUIRE((t.scenario == 0 || plan.scenarios[static_cast<std::size_t>(t.scenario - 1)].input == BumpedInput::spot));
          const long double ds = moved_spot(t.scenario) - std::exp(static_cast<long double>(x0));
          sum += t.coef;
          linear += t.coef * ds;
          quadratic += t.coef * ds * ds / 2;
          weight += std::fabs(t.coef * ds);
        }
        if (name == "gamma") {
          CHECK(sum == 0.0);
          CHECK(std::fabs(static_cast<double>(linear)) <= 4 * 0x1p-52 * static_cast<double>(weight));
          CHECK(static_cast<double>(quadratic) == Approx(1.0).epsilon(1e-14));
        } else {
          CHECK(sum == 0.0);
          CHECK(static_cast<double>(linear) == Approx(1.0).epsilon(1e-15));
        }
      }
    }
  }
}

TEST_CASE("the gamma of a price linear in the spot is 0 to double rounding in either precision", "[pricing][greeks]") {
  // A continuous floating lookback call pays S_T - min S e^{-shift}, so on
  // common random numbers every path's payoff is proportional to S0 and
  // its second difference in S0 is 0: gamma is rounding alone. Its three
  // payoffs are valued in double on one path (the base, moved by exact log
  // offsets), so each is off by at most (2 + |ln S|) u of S_T and of
  // min S (exp, the shift's subtraction; |ln S| < 6) and 5 u of the payoff
  // (its difference, the discount, the Greek's sum), u = 2^-53; times
  // sum |a_c| = 4 / h^2 (h = 1% of S0 = 1) that bounds every path, hence
  // the mean, by 4 u (8 (S_T + min S) + 5 P). On average S_T + min S <
  // 1.05 S0 (e^{(r - q) T} + 1): the bump up moves the path by 1%, and
  // 16384 samples put the mean of S_T within 0.2% (its spread is 25% of
  // S0). Re-simulating each bump from fl(ln(S0 +- h)) instead made the
  // fp32 gamma V (d+ - 2 d0 + d-) / h^2, d the roundings of the three
  // starts: about -3e-6, with a standard error of 8e-8.
  const double s0 = 100.0, r = 0.05, q = 0.02, h = 0.01 * s0;
  for (const Device& d : test::devices()) {
    for (Precision prec : {Precision::fp64, Precision::fp32}) {
      INFO(test::describe(d, prec));
      Portfolio p;
      p.rate = r;
      p.paths = kernels::pricing::kSamplesPerBlock;
      p.antithetic = true;
      p.seed = 20261130;
      p.steps_per_year = 50;
      p.greeks = {"gamma"};
      p.assets = {{"A", s0, q, 0.25, "gbm"}};
      Instrument lookback{"lookback", "lookback", true, 0.0, 1.0, 0};
      lookback.floating = true;
      p.instruments = {lookback};
      PortfolioRun run(p, plan_samples(p, d, test::world()), d, prec, test::world());
      while (run.steps_done() < run.steps()) run.advance();
      const std::vector<Estimate> prices = run.finish();
      REQUIRE(run.greeks().size() == 1);
      const Estimate& gamma = run.greeks()[0].estimate;
      const double scale = 1.05 * s0 * (std::exp(r - q) + 1.0);
      const double bound = 4.0 / (h * h) * 0x1p-53 * (8.0 * scale + 5.0 * 1.05 * prices[0].price);
      INFO("gamma " << gamma.price << " +- " << gamma.standard_error << ", rounding bound " << bound);
      CHECK(std::fabs(gamma.price) <= bound);
      CHECK(gamma.standard_error <= bound);
    }
  }
}

TEST_CASE("progress weighs the regression pass against pricing paths that carry Greeks", "[pricing][progress]") {
  // An American with delta and gamma: as many regression paths as pricing
  // paths, but each pricing path is also valued in the Greeks' scenarios.
  // Once the regression pass is done, half of the paths are, and only
  // 1 / (2 + scenarios) of the work.
  const Device d = test::devices().front();
  Portfolio p;
  p.rate = 0.03;
  p.paths = 2 * kernels::pricing::kSamplesPerBlock;
  p.regression_paths = p.paths;
  p.chunk_paths = kernels::pricing::kSamplesPerBlock;
  p.seed = 7;
  p.steps_per_year = 8;
  p.greeks = {"delta", "gamma"};
  p.assets = {{"A", 100.0, 0.0, 0.25, "gbm"}};
  Instrument put{"put", "american", false, 100.0, 1.0, 0};
  put.fixings = 8;
  p.instruments = {put};
  const auto scenarios = static_cast<double>(plan_greeks(p, path_groups(p).front(), Precision::fp64).scenarios.size());
  REQUIRE(scenarios >= 2);
  PortfolioRun run(p, plan_samples(p, d, test::world()), d, Precision::fp64, test::world());
  CHECK(run.work_fraction() == 0.0);
  while (run.paths_done() < static_cast<double>(p.regression_paths)) run.advance();
  REQUIRE(run.paths_done() == static_cast<double>(p.regression_paths));
  CHECK(run.work_fraction() == Approx(1.0 / (2.0 + scenarios)));
  while (run.steps_done() < run.steps()) run.advance();
  CHECK(run.work_fraction() == 1.0);
}

TEST_CASE("a Longstaff-Schwartz date's sums on the device equal the documented order, and its cash flows",
          "[pricing][reproducible]") {
  // Synthetic states of a put (strike 100) on one block and a short second
  // one, two dates and two padding columns, degree 2 (monomials): FitDate
  // brings every sample's cash flow to date 1 (the last: the intrinsic
  // value) and makes its terms of date 0's normal equations, FitLaneSums
  // adds them lane by lane and FitLaneTree folds each block's lanes by the
  // pairwise tree. Recomputed here by the definition, bit for bit; then
  // date 0 again as a later date, with a policy that exercises where the
  // continuation is below 3.
  using namespace strata::kernels::pricing;
  const std::int64_t local = kSamplesPerBlock + 700, row = 4;
  const int column = 1, degree = 2, m = degree + 1, width = fit_width(degree);
  REQUIRE(width == 6 + 3);   // the matrix's upper triangle, the right-hand side
  std::vector<double> states(static_cast<std::size_t>(local * row));   // [date column][sample]
  auto state = [&](std::int64_t s, int c) -> double& { return states[static_cast<std::size_t>(c * local + s)]; };
  for (std::int64_t s = 0; s < local; ++s) {
    for (int c = 0; c < row; ++c) state(s, c) = 80.0 + 40.0 * std::fmod(0.618034 * double(s * row + c + 1), 1.0);
  }
  const double d1 = std::exp(-0.05), d0 = std::exp(-0.025);
  auto intrinsic = [](double u) { return std::max(100.0 - u, 0.0); };
  for (const Device& dev : test::devices()) {
    INFO(to_string(dev.backend));
    const std::int64_t blocks = 2, lanes = blocks * kLanes;
    Buffer<double> st(dev, states.size()), cash(dev, static_cast<std::size_t>(local)),
        terms(dev, static_cast<std::size_t>(local * width)), lane_sums(dev, static_cast<std::size_t>(lanes * width)),
        block_sums(dev, static_cast<std::size_t>(blocks * width));
    st.copy_from_host(states.data(), states.size());
    FitDate k{.states = st.data(), .column = column, .date = 0, .local = local, .cash = cash.data(),
              .terms = terms.data(), .call = false, .laguerre = false, .degree = degree, .strike = 100.0,
              .discount_next = d1, .discount = d0, .first = true};
    for (int policy = 0; policy < 2; ++policy) {
      if (policy == 1) {
        // Date 0 again as if it were date 1's successor: exercise where
        // 3 + 0 x + 0 x^2 (the continuation) is at most the intrinsic value.
        k.first = false;
        k.beta[0] = 3.0;
      }
      std::vector<double> expect_cash(static_cast<std::size_t>(local));
      cash.copy_to_host(expect_cash.data(), expect_cash.size());
      parallel_for(dev, local, k);
      parallel_for(dev, width * lanes, FitLaneSums{terms.data(), lane_sums.data(), local, lanes, width});
      parallel_for(dev, blocks * width, FitLaneTree{lane_sums.data(), block_sums.data(), width});
      std::vector<double> got(static_cast<std::size_t>(blocks * width)), got_cash(static_cast<std::size_t>(local));
      block_sums.copy_to_host(got.data(), got.size());
      cash.copy_to_host(got_cash.data(), got_cash.size());
      std::vector<double> lane(static_cast<std::size_t>(lanes * width), 0.0);
      for (std::int64_t i = 0; i < lanes; ++i) {
        const std::int64_t b = i / kLanes;
        for (std::int64_t s = b * kSamplesPerBlock + i % kLanes; s < std::min(local, (b + 1) * kSamplesPerBlock);
             s += kLanes) {
          const double next = state(s, column + 1), v = intrinsic(next);
          auto& c = expect_cash[static_cast<std::size_t>(s)];
          if (policy == 0 || (v > 0.0 && v >= 3.0)) c = d1 * v;
          const double u = state(s, column);
          if (!(intrinsic(u) > 0.0)) continue;
          const double x = u / 100.0, phi[3] = {1.0, x, x * x}, y = c / d0;
          double* sum = lane.data() + i * width;
          int t = 0;
          for (int a = 0; a < m; ++a) {
            for (int bb = a; bb < m; ++bb) sum[t++] += phi[a] * phi[bb];
          }
          for (int a = 0; a < m; ++a) sum[t + a] += phi[a] * y;
        }
      }
      for (std::int64_t s = 0; s < local; ++s) {
        REQUIRE(same_bits(got_cash[static_cast<std::size_t>(s)], expect_cash[static_cast<std::size_t>(s)]));
      }
      for (std::int64_t b = 0; b < blocks; ++b) {
        for (int c = 0; c < width; ++c) {
          for (std::int64_t half = kLanes / 2; half > 0; half /= 2) {
            for (std::int64_t l = 0; l < half; ++l)
              lane[static_cast<std::size_t>((b * kLanes + l) * width + c)] +=
                  lane[static_cast<std::size_t>((b * kLanes + l + half) * width + c)];
          }
          INFO("block " << b << " component " << c);
          // Every term is stored, so rounded, before it is added, on either backend: the same bits.
          CHECK(same_bits(got[static_cast<std::size_t>(b * width + c)],
                          lane[static_cast<std::size_t>(b * kLanes * width + c)]));
        }
      }
      // The sums are not empty: block 0's count of paths in the money.
      CHECK(got[0] > 1000.0);
    }
  }
}
