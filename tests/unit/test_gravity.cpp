// The nbody gravity kernels: on every backend (the host's vectorised group
// loop, CUDA's shared-memory tiles where a device is visible) against the
// STRATA_HD per-body reference, and the pair sum against Newton's law.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/backend/buffer.hpp"
#include "models/nbody/kernels.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;
namespace kp = strata::kernels::particles;

namespace {

// Random bodies in the unit cube with masses in [0.5, 1.5) / n.
template <class Real>
std::vector<Real> random_bodies(std::int64_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Real> b(4 * static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) b[4 * i + d] = static_cast<Real>(u(gen));
    b[4 * i + 3] = static_cast<Real>((0.5 + u(gen)) / static_cast<double>(n));
  }
  return b;
}

// Sums of targets [t0, t0 + nt) of `all` over the sources [0, n) in two
// blocks split at `cut`, as the model sums a rank's bodies.
template <class Real>
void sums(const Device& dev, const std::vector<Real>& all, std::int64_t t0, std::int64_t nt, std::int64_t cut,
          Real eps2, std::vector<Real>& acc, std::vector<Real>& phi, bool masses = true) {
  const std::int64_t n = static_cast<std::int64_t>(all.size() / 4);
  Buffer<Real> targets(dev, 4 * static_cast<std::size_t>(nt)), a(dev, 3 * static_cast<std::size_t>(nt)),
      p(dev, static_cast<std::size_t>(nt)), lo(dev, 4 * static_cast<std::size_t>(cut)),
      hi(dev, 4 * static_cast<std::size_t>(n - cut));
  targets.copy_from_host(all.data() + 4 * t0, targets.size());
  lo.copy_from_host(all.data(), lo.size());
  hi.copy_from_host(all.data() + 4 * cut, hi.size());
  // Garbage in the sums: the first launch must not read them.
  std::vector<Real> junk(3 * static_cast<std::size_t>(nt), Real(7));
  a.copy_from_host(junk.data(), a.size());
  p.copy_from_host(junk.data(), p.size());
  // The first block starts the sums (clear); the second adds to them.
  parallel_for(
      dev, nt,
      nbody::Gravity<Real>{{targets.data(), lo.data(), nt, cut, t0, 0, eps2, a.data(), p.data(), true, true, masses}});
  parallel_for(dev, nt,
               nbody::Gravity<Real>{
                   {targets.data(), hi.data(), nt, n - cut, t0, cut, eps2, a.data(), p.data(), true, false, masses}});
  acc.resize(a.size());
  phi.resize(p.size());
  a.copy_to_host(acc.data(), acc.size());
  p.copy_to_host(phi.data(), phi.size());
}

// The reference: GravityBlock::body, one target at a time, all sources at once.
template <class Real>
void reference(const std::vector<Real>& all, std::int64_t t0, std::int64_t nt, Real eps2, std::vector<Real>& acc,
               std::vector<Real>& phi, bool masses = true) {
  const std::int64_t n = static_cast<std::int64_t>(all.size() / 4);
  acc.assign(3 * static_cast<std::size_t>(nt), Real(0));
  phi.assign(static_cast<std::size_t>(nt), Real(0));
  const kp::GravityBlock<Real> b{all.data() + 4 * t0, all.data(), nt,   n,     t0,    0, eps2,
                                 acc.data(),          phi.data(), true, false, masses};
  for (std::int64_t t = 0; t < nt; ++t) b.body(t);
}

template <class Real>
bool same_bits(const std::vector<Real>& a, const std::vector<Real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)) == 0;
}

}  // namespace

TEMPLATE_TEST_CASE("gravity kernels agree with the per-body reference on every backend", "[nbody]", float, double) {
  using Real = TestType;
  const std::int64_t n = 1037, t0 = 101, nt = 603, cut = 389;  // ragged groups and tiles, self in both blocks
  const std::vector<Real> all = random_bodies<Real>(n, 7);
  const Real eps2 = Real(1e-4);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, std::is_same_v<Real, float> ? Precision::fp32 : Precision::fp64)) {
      // With each source's mass, and without (GravityBlock::masses: sums of
      // r / |r|^3 alone, for bodies of one mass).
      for (const bool masses : {true, false}) {
        INFO((masses ? "masses" : "without masses"));
        std::vector<Real> ref_acc, ref_phi;
        reference(all, t0, nt, eps2, ref_acc, ref_phi, masses);
        std::vector<Real> acc, phi;
        sums(d, all, t0, nt, cut, eps2, acc, phi, masses);
        if (d.backend == Backend::host) {
          // Same operations in the same order: the same bits.
          CHECK(same_bits(acc, ref_acc));
          CHECK(same_bits(phi, ref_phi));
        } else {
          // CUDA takes 1/r from rsqrt.approx (fp32: 2 ulp; fp64 with CUDA
          // rsqrt's correction: 1 ulp) and fuses multiply-adds, the softening
          // the first term of r^2: a term m r^-3 d is then within about
          // 8 ulp of the host's (the root's error three times, the products'
          // roundings), a sum of n terms within 8 n eps of its magnitude sum
          // (here |a| sums to ~n/n^2 x max pull).
          const double tol = 8.0 * static_cast<double>(n) * std::numeric_limits<Real>::epsilon();
          const double scale = masses ? 1.0 : static_cast<double>(n);  // the pulls without the masses' 1/n
          double worst = 0;
          for (std::size_t k = 0; k < acc.size(); ++k)
            worst = std::max(worst,
                             std::fabs(double(acc[k]) - double(ref_acc[k])) / (std::fabs(double(ref_acc[k])) + scale));
          for (std::size_t k = 0; k < phi.size(); ++k)
            worst = std::max(worst, std::fabs(double(phi[k]) - double(ref_phi[k])) / std::fabs(double(ref_phi[k])));
          CHECK(worst <= tol);
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("bodies of one mass: the sums without it, times it, are the sums with it", "[nbody]", float,
                   double) {
  using Real = TestType;
  // Every body of mass m = 1/n: the pairs leave m out and the caller
  // multiplies the finished sums by it. Each term then differs from the
  // one with the mass by the rounding of one product (m (1/r)) and the
  // final product adds one more: within 8 n eps of the sum of the terms'
  // magnitudes, as the backends' own difference (above), on every backend.
  const std::int64_t n = 517, t0 = 0, nt = n, cut = 200;
  std::vector<Real> all = random_bodies<Real>(n, 11);
  const Real m = Real(1) / Real(n);
  for (std::int64_t i = 0; i < n; ++i) all[static_cast<std::size_t>(4 * i + 3)] = m;
  const Real eps2 = Real(1e-4);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, std::is_same_v<Real, float> ? Precision::fp32 : Precision::fp64)) {
      std::vector<Real> acc, phi, acc1, phi1;
      sums(d, all, t0, nt, cut, eps2, acc, phi, true);
      sums(d, all, t0, nt, cut, eps2, acc1, phi1, false);
      const double tol = 8.0 * static_cast<double>(n) * std::numeric_limits<Real>::epsilon();
      double worst = 0;
      for (std::size_t k = 0; k < acc.size(); ++k)
        worst =
            std::max(worst, std::fabs(double(acc1[k]) * double(m) - double(acc[k])) / (std::fabs(double(acc[k])) + 1));
      for (std::size_t k = 0; k < phi.size(); ++k)
        worst = std::max(worst, std::fabs(double(phi1[k]) * double(m) - double(phi[k])) / std::fabs(double(phi[k])));
      CHECK(worst <= tol);
      CHECK(worst > 0);  // the two are different sums: not a test of one against itself
    }
  }
}

TEST_CASE("the pair sum is Newton's law with Plummer softening", "[nbody]") {
  // Two bodies 0.3 apart along y with eps = 0.4: a = m dy / (r^2 + eps^2)^(3/2)
  // = 2 x 0.3 / 0.125, phi = -m / 0.5.
  const std::vector<double> bodies{0, 0, 0, 1, 0, 0.3, 0, 2};
  std::vector<double> acc(6, 0.0), phi(2, 0.0);
  const kp::GravityBlock<double> b{bodies.data(), bodies.data(), 2, 2, 0, 0, 0.16, acc.data(), phi.data(), true, false};
  b.body(0);
  b.body(1);
  CHECK(acc[1] == Approx(2 * 0.3 / 0.125).epsilon(1e-15));
  CHECK(acc[4] == Approx(-1 * 0.3 / 0.125).epsilon(1e-15));
  CHECK(acc[0] == 0.0);
  CHECK(phi[0] == Approx(-2 / 0.5).epsilon(1e-15));
  CHECK(phi[1] == Approx(-1 / 0.5).epsilon(1e-15));
}

TEMPLATE_TEST_CASE("the sums without the potential are the same accelerations, phi untouched", "[nbody]", float,
                   double) {
  using Real = TestType;
  const std::int64_t n = 203;
  const std::vector<Real> all = random_bodies<Real>(n, 3);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, std::is_same_v<Real, float> ? Precision::fp32 : Precision::fp64)) {
      std::vector<std::vector<Real>> acc(2), phi(2);
      for (int potential = 0; potential < 2; ++potential) {
        Buffer<Real> bodies(d, all.size()), a(d, 3 * static_cast<std::size_t>(n)), p(d, static_cast<std::size_t>(n));
        bodies.copy_from_host(all.data(), all.size());
        const std::vector<Real> marker(static_cast<std::size_t>(n), Real(-3));
        p.copy_from_host(marker.data(), marker.size());
        parallel_for(d, n,
                     nbody::Gravity<Real>{{bodies.data(), bodies.data(), n, n, 0, 0, Real(1e-4), a.data(), p.data(),
                                           potential == 1, true}});
        acc[static_cast<std::size_t>(potential)].resize(a.size());
        phi[static_cast<std::size_t>(potential)].resize(p.size());
        a.copy_to_host(acc[static_cast<std::size_t>(potential)].data(), a.size());
        p.copy_to_host(phi[static_cast<std::size_t>(potential)].data(), p.size());
      }
      CHECK(same_bits(acc[0], acc[1]));
      CHECK(phi[0] == std::vector<Real>(static_cast<std::size_t>(n), Real(-3)));
      CHECK(phi[1][0] < Real(0));
    }
  }
}
