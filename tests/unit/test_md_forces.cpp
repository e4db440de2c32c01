// md's pair forces, energies and virial against a direct O(N^2) sum with
// the minimum image, on random configurations, for each backend and
// precision; and the skin: after every atom moves by up to skin/2 the lists
// built before still hold every pair inside the cutoff.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "models/md/atom_system.hpp"
#include "models/md/direct_sum.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;
using namespace strata::md;

namespace {

constexpr double kBox = 6.5, kCutoff = 2.5, kSkin = 0.3;

HostParticles random_atoms(int n, unsigned seed) { return md::random_atoms(n, kBox, 0.85, seed); }

using Reference = DirectSum;

Reference direct_sum(const std::vector<double>& pos, double epsilon, double sigma, bool shift) {
  return md::direct_sum(pos, kBox, epsilon, sigma, kCutoff, shift);
}

template <class T>
void check_against_direct(const Device& device, const HostParticles& atoms, bool displace) {
  const Domain domain(test::world(), {kBox, kBox, kBox});
  AtomSystem<T> system(device, domain, kCutoff + kSkin);
  system.load(atoms, false);
  HostParticles now = atoms;
  if (displace) {
    // Every atom moves by just under skin/2 in a random direction; the lists stay.
    std::mt19937_64 gen(99);
    std::normal_distribution<double> g;
    HostParticles moved = system.download();
    for (std::size_t i = 0; i < moved.size(); ++i) {
      double d[3] = {g(gen), g(gen), g(gen)};
      const double len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      for (int a = 0; a < 3; ++a) moved.position[3 * i + static_cast<std::size_t>(a)] += 0.499 * kSkin * d[a] / len;
    }
    system.load(moved, true);   // keep the lists built from x0
    REQUIRE_FALSE(system.needs_rebuild(kSkin));
    now = moved;
  }
  const auto lj = kernels::particles::LennardJones<T>::make(1.0, 1.0, kCutoff, true);
  system.compute_forces(lj, true);
  const HostParticles h = system.download();
  // The reference sees the positions as the kernels do (rounded to T).
  std::vector<double> pos(3 * h.size());
  for (std::size_t k = 0; k < h.size(); ++k)
    for (int a = 0; a < 3; ++a) pos[3 * static_cast<std::size_t>(h.index[k]) + static_cast<std::size_t>(a)] =
        static_cast<T>(h.position[3 * k + static_cast<std::size_t>(a)]);
  const Reference ref = direct_sum(pos, 1.0, 1.0, true);
  const std::vector<double> f = system.host_forces(), ew = system.host_energy_virial();
  const double eps = std::numeric_limits<T>::epsilon();
  const double per_atom = kForceRoundings * eps;
  double energy = 0, virial = 0;
  for (std::size_t k = 0; k < h.size(); ++k) {
    const std::size_t i = static_cast<std::size_t>(h.index[k]);
    for (int a = 0; a < 3; ++a) {
      INFO("atom " << i << " axis " << a);
      CHECK(std::abs(f[3 * k + static_cast<std::size_t>(a)] - ref.force[3 * i + static_cast<std::size_t>(a)]) <=
            per_atom * ref.scale[i] + 1e-300);
    }
    energy += ew[2 * k];
    virial += ew[2 * k + 1];
  }
  const double total = static_cast<double>(h.size()) * per_atom * ref.energy_scale / 2 + 1e-300;
  CHECK(std::abs(energy - ref.energy) <= total);
  CHECK(std::abs(virial - ref.virial) <= total);
  // Newton's third law through the full lists: the forces sum to zero.
  for (int a = 0; a < 3; ++a) {
    double sum = 0, mag = 0;
    for (std::size_t k = 0; k < h.size(); ++k) {
      sum += f[3 * k + static_cast<std::size_t>(a)];
      mag += ref.scale[static_cast<std::size_t>(h.index[k])];
    }
    CHECK(std::abs(sum) <= per_atom * mag);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("md's vectorised host pair kernel gives the bits of the plain kernel", "[md]", double, float) {
  const Device host;
  const HostParticles atoms = random_atoms(180, 7);
  const Domain domain(test::world(), {kBox, kBox, kBox});
  const auto lj = kernels::particles::LennardJones<TestType>::make(1.0, 1.0, kCutoff, true);
  std::vector<std::vector<double>> f, ew;
  for (bool reference : {true, false}) {
    AtomSystem<TestType> system(host, domain, kCutoff + kSkin);
    system.load(atoms, false);
    if (reference) {
      // The plain STRATA_HD kernel atom by atom, not its vectorised host_for.
      system.pack_positions();
      host::parallel_for(system.n_local(), system.template pair_forces<true>(lj));
    } else {
      system.compute_forces(lj, true);
    }
    f.push_back(system.host_forces());
    ew.push_back(system.host_energy_virial());
  }
  CHECK(f[0] == f[1]);
  CHECK(ew[0] == ew[1]);
}

// The interior atoms' forces (computed while the ghosts' positions travel)
// read no ghost, and the interior and border launches together give the
// bits of one launch over all atoms: each atom's sums follow its own row.
TEMPLATE_TEST_CASE("md's interior atoms read no ghost; interior and border give the bits of all", "[md]", double,
                   float) {
  const double box = 12;  // an interior beyond the ghosts' reach from every face
  const HostParticles atoms = md::random_atoms(1200, box, 0.85, 5);
  const Domain domain(test::world(), {box, box, box});
  const auto lj = kernels::particles::LennardJones<TestType>::make(1.0, 1.0, kCutoff, true);
  for (const Device& d : test::devices()) {
    INFO(test::describe(d, sizeof(TestType) == 8 ? Precision::fp64 : Precision::fp32));
    using Rows = typename AtomSystem<TestType>::Rows;
    AtomSystem<TestType> system(d, domain, kCutoff + kSkin);
    system.load(atoms, false);
    REQUIRE(system.n_interior() > 0);
    REQUIRE(system.n_interior() < system.n_local());
    system.compute_forces(lj, true);
    const std::vector<double> f = system.host_forces(), ew = system.host_energy_virial();
    system.upload_forces(std::vector<double>(f.size(), 0.0));
    system.poison_ghost_positions();
    system.compute_forces(lj, true, Rows::interior);
    const std::vector<double> interior = system.host_forces();
    int finite = 0;
    for (std::size_t k = 0; k < interior.size(); k += 3)
      finite += interior[k] != 0 && std::isfinite(interior[k]) ? 1 : 0;
    CHECK(finite == system.n_interior());  // every interior atom computed, none read a ghost
    system.forward_positions();
    system.compute_forces(lj, true, Rows::border);
    CHECK(system.host_forces() == f);
    CHECK(system.host_energy_virial() == ew);
  }
}

TEMPLATE_TEST_CASE("md pair forces, energy and virial match a direct minimum-image sum", "[md]", double, float) {
  for (const Device& d : test::devices()) {
    INFO(test::describe(d, sizeof(TestType) == 8 ? Precision::fp64 : Precision::fp32));
    for (unsigned seed : {1u, 2u, 3u}) {
      INFO("seed " << seed);
      const HostParticles atoms = random_atoms(180, seed);
      check_against_direct<TestType>(d, atoms, false);
      check_against_direct<TestType>(d, atoms, true);
    }
  }
}

// HOOMD-blue's "GPU compare": the CUDA kernels against the host on the same
// input, where a device is present (one backend only: nothing to compare).
// Not bitwise: nvcc contracts multiply-adds and CUDA's division rounds as
// IEEE but the fused operations do not, so the bound is the rounding bound
// of the direct-sum test, twice (each side within it of the exact sums).
TEMPLATE_TEST_CASE("md forces on CUDA agree with the host", "[md][gpu]", double, float) {
  const std::vector<Device> devices = test::devices();
  if (devices.size() < 2) return;
  const HostParticles atoms = random_atoms(180, 11);
  const Domain domain(test::world(), {kBox, kBox, kBox});
  const auto lj = kernels::particles::LennardJones<TestType>::make(1.0, 1.0, kCutoff, true);
  std::vector<std::vector<double>> forces;
  std::vector<std::vector<std::int64_t>> order;
  for (const Device& d : devices) {
    AtomSystem<TestType> system(d, domain, kCutoff + kSkin);
    system.load(atoms, false);
    system.compute_forces(lj, true);
    forces.push_back(system.host_forces());
    order.push_back(system.download().index);
  }
  REQUIRE(order[0] == order[1]);   // the same build, done on the host side
  const std::vector<double> pos = atoms.position;
  const Reference ref = direct_sum(pos, 1.0, 1.0, true);
  const double eps = std::numeric_limits<TestType>::epsilon();
  for (std::size_t k = 0; k < order[0].size(); ++k)
    for (int a = 0; a < 3; ++a) {
      const std::size_t e = 3 * k + static_cast<std::size_t>(a);
      CHECK(std::abs(forces[0][e] - forces[1][e]) <= 2 * kForceRoundings * eps * ref.scale[static_cast<std::size_t>(order[0][k])]);
    }
}

// The periodic wrap takes a few box lengths off one at a time, exactly as
// the unbounded loop it replaced did (the same bits for every position a
// run produces), and farther values in O(1); non-finite positions and
// positions beyond 2^30 box lengths are refused, untouched.
TEST_CASE("wrap_periodic: the loop's bits nearby, O(1) far away, refusal beyond", "[md]") {
  const auto loop = [](double v, double length, int& image) {
    while (v < 0) {
      v += length;
      --image;
    }
    while (v >= length) {
      v -= length;
      ++image;
    }
    return v;
  };
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> near(-4 * kBox, 5 * kBox);
  for (int k = 0; k < 100000; ++k) {
    const double v = k < 4 ? std::vector<double>{-1e-300, -0.0, kBox, -kBox}[static_cast<std::size_t>(k)] : near(rng);
    int a = 0, b = 0;
    double w = v;
    const double expected = loop(v, kBox, a);
    REQUIRE(wrap_periodic(w, kBox, b));
    REQUIRE(std::bit_cast<std::uint64_t>(w) == std::bit_cast<std::uint64_t>(expected));
    REQUIRE(a == b);
  }
  for (double v : {1e6, -1e6, 123456.789 * kBox, -0.5 * kMaxImages * kBox}) {
    double w = v;
    int image = 0;
    REQUIRE(wrap_periodic(w, kBox, image));
    REQUIRE(w >= 0);
    REQUIRE(w < kBox);
    REQUIRE(std::fabs(w + image * kBox - v) <= 1e-9 * std::fabs(v));
  }
  for (double v : {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN(), 1e300, -2 * kMaxImages * kBox}) {
    double w = v;
    int image = 7;
    REQUIRE_FALSE(wrap_periodic(w, kBox, image));
    REQUIRE(image == 7);
    REQUIRE((std::isnan(v) ? std::isnan(w) : w == v));
  }
}
