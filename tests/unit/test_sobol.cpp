// Host tests of the quasi-Monte Carlo building blocks: Sobol' points
// (kernels/rng/sobol.hpp) against Boost.Random's own generator and the net
// property, Burley's Owen scrambling, AS 241's normal quantile
// (kernels/rng/inverse_normal.hpp) and the Brownian-bridge plan
// (kernels/pricing/brownian_bridge.hpp).
#include <boost/random/sobol.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/pricing/brownian_bridge.hpp"
#include "kernels/rng/inverse_normal.hpp"
#include "kernels/rng/philox.hpp"
#include "kernels/rng/sobol.hpp"
#include "models/pricing/brownian_bridge_plan.hpp"
#include "models/pricing/sobol_directions.hpp"

using strata::rng::kSobolBits;
using strata::rng::owen_scramble;
using strata::rng::sobol_point;

namespace {

std::uint32_t gray(std::uint32_t i) { return i ^ (i >> 1); }

// Point `index` of dimension d, scrambled with `seed` when seed != 0.
std::uint32_t point(const std::vector<std::uint32_t>& v, int d, std::uint32_t index, std::uint32_t seed) {
  const std::uint32_t x = sobol_point(v.data() + static_cast<std::size_t>(d) * kSobolBits, index);
  return seed != 0 ? owen_scramble(x, seed) : x;
}

// Every cell of the 2^k x 2^(m-k) grid holds exactly one of the first 2^m
// points of dimensions (d1, d2): the (0, m, 2)-net property, k = 0..m
// (k = 0 and k = m are the one-dimensional stratifications).
bool is_0m2_net(const std::vector<std::uint32_t>& v, int d1, int d2, int m, std::uint32_t seed1,
                std::uint32_t seed2) {
  const std::uint32_t n = 1u << m;
  for (int k = 0; k <= m; ++k) {
    std::vector<int> count(n, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t cx = k == 0 ? 0 : point(v, d1, i, seed1) >> (32 - k);
      const std::uint32_t cy = k == m ? 0 : point(v, d2, i, seed2) >> (32 - (m - k));
      ++count[(cx << (m - k)) | cy];
    }
    for (int c : count)
      if (c != 1) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("Sobol' points equal Boost.Random's generator, dimension by dimension", "[rng][sobol]") {
  // Boost visits the points in Gray-code order and skips point 0: its n-th
  // point is point gray(n + 1) of the natural order.
  for (const int dims : {1, 2, 40, 1111}) {
    const auto v = strata::pricing::sobol_direction_table(dims);
    boost::random::sobol_engine<std::uint32_t, 32> boost_sobol(static_cast<std::size_t>(dims));
    const std::uint32_t points = dims > 100 ? 64 : 4096;
    for (std::uint32_t n = 0; n < points; ++n)
      for (int d = 0; d < dims; ++d) {
        const std::uint32_t expected = boost_sobol();
        if (point(v, d, gray(n + 1), 0) != expected) {
          FAIL("dims " << dims << ", point " << n << ", dimension " << d);
        }
      }
  }
  CHECK(strata::pricing::sobol_max_dimensions() == 3667);
  CHECK_THROWS_AS(strata::pricing::sobol_direction_table(3668), std::out_of_range);
}

TEST_CASE("Sobol' dimensions 0 and 1 form a (0,m,2)-net, scrambled or not", "[rng][sobol]") {
  const auto v = strata::pricing::sobol_direction_table(8);
  for (int m = 1; m <= 12; ++m) CHECK(is_0m2_net(v, 0, 1, m, 0, 0));
  const strata::rng::PhiloxKey key{{2026u, 11u}};
  for (std::uint32_t r = 0; r < 8; ++r) {
    const auto words = strata::rng::philox4x32_10({{r, 0u, 0u, 0u}}, key);
    CHECK(is_0m2_net(v, 0, 1, 10, words.v[0], words.v[1]));
  }
  // Every dimension alone is stratified, scrambled or not: one of the
  // first 2^m points in each interval [c 2^-m, (c + 1) 2^-m).
  for (int d = 0; d < 8; ++d)
    for (const std::uint32_t seed : {0u, 0x9e3779b9u * static_cast<std::uint32_t>(d + 1)}) {
      std::vector<int> count(1u << 10, 0);
      for (std::uint32_t i = 0; i < (1u << 10); ++i) ++count[point(v, d, i, seed) >> 22];
      for (int c : count) REQUIRE(c == 1);
    }
}

TEST_CASE("Owen scrambling permutes nested intervals: equal leading digits stay equal", "[rng][sobol]") {
  // Owen's nested permutation: the image's first j bits depend only on the
  // input's first j bits. So two points agreeing in exactly j leading bits
  // map to points agreeing in exactly j leading bits (a bijection on each
  // level), and the scramble is a bijection of the 32-bit words.
  const strata::rng::PhiloxKey key{{7u, 1u}};
  for (std::uint32_t t = 0; t < 2000; ++t) {
    const auto w = strata::rng::philox4x32_10({{t, 1u, 0u, 0u}}, key);
    const std::uint32_t seed = w.v[0], x = w.v[1];
    const int j = static_cast<int>(w.v[2] % 32);
    const std::uint32_t y = (x ^ (0x80000000u >> j)) ^ (w.v[3] & static_cast<std::uint32_t>(0xFFFFFFFFull >> (j + 1)));
    // x and y share exactly j leading bits.
    const std::uint32_t sx = owen_scramble(x, seed), sy = owen_scramble(y, seed);
    const std::uint32_t lead = j == 0 ? 0u : ~0u << (32 - j);
    REQUIRE((sx & lead) == (sy & lead));
    REQUIRE(((sx ^ sy) & (0x80000000u >> j)) != 0u);
  }
  CHECK(owen_scramble(0u, 12345u) != owen_scramble(0u, 54321u));
}

TEST_CASE("AS 241 coefficients match the paper's transcription hash sums", "[rng][normal]") {
  // Wichura (1988) prints, for each pair of tables, the sum of the
  // coefficients' decimal mantissas (the leading 1 of B, D, F excluded).
  const double expected[3] = {55.8831928806149014439, 49.33206503301610289036, 47.52583317549289671629};
  for (int pair = 0; pair < 3; ++pair) {
    long double sum = 0;
    for (int table = 2 * pair; table <= 2 * pair + 1; ++table)
      for (int k = (table % 2 == 0 ? 0 : 1); k < 8; ++k) {
        const long double c = strata::rng::as241_coefficient(table, k);
        sum += c / std::pow(10.0L, std::floor(std::log10(c)));
      }
    // 15 mantissas, each off by half an ulp of a double (~1e-16 x 10).
    CHECK(std::fabs(static_cast<double>(sum) - expected[pair]) < 1e-13);
  }
}

TEST_CASE("normal_quantile inverts the normal distribution to round-off", "[rng][normal]") {
  using strata::rng::normal_quantile;
  const auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  // A relative error e of the quantile x moves Phi by about x phi(x) e,
  // which relative to p is at most about max(1, x^2) e in the tails (Mills'
  // ratio); AS 241 gives e ~ 1e-16 and erfc about 1 ulp, so 64 ulp x
  // max(1, x^2) bounds an honest implementation and catches any wrong digit
  // of a coefficient (those move p by 1e-10 and more).
  const double eps = std::numeric_limits<double>::epsilon();
  for (double p : {1e-300, 1e-100, 1e-20, 1.4e-11, 1e-10, 1e-5, 0.001, 0.02, 0.075, 0.0751, 0.3, 0.5 - 1e-9, 0.5,
                   0.6, 0.925, 0.99, 0.999999}) {
    const double x = normal_quantile(p);
    // The smaller tail, where it is exact: 1 - p is exact for p >= 1/2.
    const double q = p < 0.5 ? p : 1.0 - p;
    const double got = phi(-std::fabs(x));
    INFO("p = " << p << ", x = " << x);
    CHECK(std::fabs(got - q) <= 64 * eps * std::max(1.0, x * x) * q);
    // Symmetric to the bit where 1 - p is exact (p >= 1/2, Sterbenz).
    if (p >= 0.5) CHECK(normal_quantile(1.0 - p) == -x);
  }
  CHECK(normal_quantile(0.975) == Approx(1.959963984540054).epsilon(1e-15));
  CHECK(normal_quantile(0.5) == 0.0);
  CHECK(std::isinf(normal_quantile(0.0)));
  CHECK(normal_quantile(0.0) < 0);
  CHECK(normal_quantile(1.0) > 0);
  // Monotone across the region boundaries (|q| = 0.425, r = 5).
  double last = normal_quantile(1e-15);
  for (double p = 2e-15; p < 0.999; p *= 1.01) {
    const double x = normal_quantile(p);
    REQUIRE(x > last);
    last = x;
  }
}

TEST_CASE("Brownian-bridge paths have the covariance min(t_i, t_j)", "[pricing][bridge]") {
  using strata::pricing::BridgeStep;
  for (const std::vector<double>& times : std::vector<std::vector<double>>{
           {0.5}, {0.25, 0.5, 0.75, 1.0}, {0.01, 0.1, 0.15, 0.4, 0.41, 0.9, 1.7}, std::vector<double>(13, 0.0)}) {
    std::vector<double> t = times;
    if (t.back() == 0.0)
      for (std::size_t i = 0; i < t.size(); ++i) t[i] = (static_cast<double>(i) + 1.0) / 12.0 + 0.001 * static_cast<double>(i * i);
    const int n = static_cast<int>(t.size());
    const std::vector<BridgeStep> plan = strata::pricing::brownian_bridge_plan(t);
    REQUIRE(static_cast<int>(plan.size()) == n);
    // Each grid point is set exactly once, from points already set.
    std::vector<int> set(static_cast<std::size_t>(n + 1), 0);
    set[0] = 1;
    for (const BridgeStep& s : plan) {
      REQUIRE(set[static_cast<std::size_t>(s.left)] == 1);
      REQUIRE(set[static_cast<std::size_t>(s.right)] == 1);
      REQUIRE(set[static_cast<std::size_t>(s.point)] == 0);
      ++set[static_cast<std::size_t>(s.point)];
    }
    for (int v : set) CHECK(v == 1);
    // W = A z: column k of A is the path from the k-th unit normal.
    std::vector<double> a(static_cast<std::size_t>(n * n)), z(static_cast<std::size_t>(n)), w(static_cast<std::size_t>(n + 1));
    for (int k = 0; k < n; ++k) {
      std::fill(z.begin(), z.end(), 0.0);
      z[static_cast<std::size_t>(k)] = 1.0;
      strata::pricing::brownian_bridge(plan.data(), n, z.data(), w.data());
      for (int i = 0; i < n; ++i) a[static_cast<std::size_t>(i * n + k)] = w[static_cast<std::size_t>(i + 1)];
    }
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double cov = 0;
        for (int k = 0; k < n; ++k) cov += a[static_cast<std::size_t>(i * n + k)] * a[static_cast<std::size_t>(j * n + k)];
        INFO("n = " << n << ", i = " << i << ", j = " << j);
        CHECK(cov == Approx(std::min(t[static_cast<std::size_t>(i)], t[static_cast<std::size_t>(j)])).epsilon(1e-13));
      }
  }
  CHECK_THROWS_AS(strata::pricing::brownian_bridge_plan({0.5, 0.5}), std::invalid_argument);
  CHECK_THROWS_AS(strata::pricing::brownian_bridge_plan({}), std::invalid_argument);
}
