// The reductions behind the reproducibility guarantee.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "engine/backend/host_copy.hpp"
#include "engine/backend/parallel.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "kernels/core/exact_sum.hpp"
#include "tests/support/test_support.hpp"
#include "tests/unit/test_functors.hpp"

using namespace strata;

namespace {

using test::Harmonic;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("host parallel_reduce is bitwise independent of the thread count", "[reduction]") {
  const std::int64_t n = 1'000'003;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const double one = host::parallel_reduce(n, Harmonic{}, 0.0, Plus{});
  omp_set_num_threads(2);
  const double two = host::parallel_reduce(n, Harmonic{}, 0.0, Plus{});
  omp_set_num_threads(7);
  const double seven = host::parallel_reduce(n, Harmonic{}, 0.0, Plus{});
  omp_set_num_threads(saved);
  CHECK(same_bits(one, two));
  CHECK(same_bits(one, seven));
  // H_n = ln n + gamma + 1/(2n) - ...; the sum is right, not just repeatable.
  CHECK(one == Approx(std::log(static_cast<double>(n)) + 0.5772156649015329 + 0.5 / n).epsilon(1e-12));
}

TEST_CASE("parallel_for and parallel_reduce agree on every backend", "[reduction]") {
  for (const Device& d : test::devices()) {
    INFO(to_string(d.backend));
    const double sum = parallel_reduce(d, 100'000, Harmonic{}, 0.0, Plus{});
    CHECK(sum == Approx(12.090146129863428).epsilon(1e-13));  // H_100000
  }
}

TEST_CASE("block_range partitions the blocks contiguously and evenly", "[reduction]") {
  for (std::int64_t n : {0, 1, 5, 16, 1000003}) {
    for (int ranks : {1, 2, 3, 4, 7}) {
      std::int64_t expect_first = 0;
      for (int r = 0; r < ranks; ++r) {
        const BlockRange b = block_range(n, r, ranks);
        CHECK(b.first == expect_first);
        CHECK(b.size() >= n / ranks);
        CHECK(b.size() <= n / ranks + 1);
        expect_first = b.last;
      }
      CHECK(expect_first == n);
    }
  }
  // No overflow for block counts near the int64 limit.
  const BlockRange last = block_range(std::int64_t{1} << 62, 6, 7);
  CHECK(last.last == std::int64_t{1} << 62);
}

TEST_CASE("tree_sum_serial is pairwise summation over the block index", "[reduction]") {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int n : {1, 2, 3, 5, 8, 13, 1000}) {
    std::vector<double> blocks(2 * static_cast<std::size_t>(n));
    for (double& x : blocks) x = u(gen);
    // Reference: recursive halving at powers of two, written independently.
    std::function<double(int, int, int)> pairwise = [&](int lo, int hi, int m) -> double {
      if (hi - lo == 1) return blocks[2 * static_cast<std::size_t>(lo) + static_cast<std::size_t>(m)];
      int half = 1;
      while (half * 2 < hi - lo) half *= 2;
      return pairwise(lo, lo + half, m) + pairwise(lo + half, hi, m);
    };
    const std::vector<double> got = test::tree_sum_serial(blocks, 2);
    for (int m = 0; m < 2; ++m) {
      INFO("n = " << n << ", moment " << m);
      CHECK(same_bits(got[static_cast<std::size_t>(m)], pairwise(0, n, m)));
    }
  }
}

// One maximum for every kernel family. md's displacement and thermo maxima
// once used a > b ? a : b, which drops a NaN unless it is the last value
// reduced, so a blown-up atom could be missed by the rebuild test.
TEST_CASE("MaxOp keeps a NaN wherever it stands and is the maximum otherwise", "[reduction]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const kernels::MaxOp max;
  CHECK(std::isnan(max(nan, 1.0)));
  CHECK(std::isnan(max(1.0, nan)));
  CHECK(std::isnan(max(max(nan, 3.0), 2.0)));
  CHECK(max(2.0, 3.0) == 3.0);
  CHECK(max(-0.5, -1.5) == -0.5);
  CHECK(max(1.0, std::numeric_limits<double>::infinity()) == std::numeric_limits<double>::infinity());
  for (const Device& d : test::devices()) {
    INFO(to_string(d.backend));
    // A NaN at the first, a middle and the last index of 10,000 values.
    for (const std::int64_t at : {std::int64_t{0}, std::int64_t{5'000}, std::int64_t{9'999}}) {
      const double m = parallel_reduce(d, 10'000, test::NaNAt{at}, 0.0, kernels::MaxOp{});
      CHECK(std::isnan(m));
    }
    CHECK(parallel_reduce(d, 10'000, test::NaNAt{-1}, 0.0, kernels::MaxOp{}) == 9'999.0);
  }
}

// An output frame leaves the device beside the next steps: the copy must
// hold the values as they were at start(), though the source is written
// again at once, and a larger frame after a smaller one must come whole.
TEST_CASE("HostCopy returns the values at start() after the source is overwritten", "[backend]") {
  for (const Device& d : test::devices()) {
    INFO(to_string(d.backend));
    HostCopy<double> copy(d);
    for (const std::size_t n : {std::size_t{1000}, std::size_t{5000}}) {
      std::vector<double> first(n), second(n, -1.0);
      for (std::size_t i = 0; i < n; ++i) first[i] = static_cast<double>(i) + 0.25 * static_cast<double>(n);
      Buffer<double> source(d, n);
      source.copy_from_host(first.data(), n);
      copy.start(source, n);
      source.copy_from_host(second.data(), n);
      const double* got = copy.wait();
      REQUIRE(copy.size() == n);
      CHECK(std::equal(first.begin(), first.end(), got));
      copy.release();   // the next, larger frame starts from a released copy
    }
  }
}
