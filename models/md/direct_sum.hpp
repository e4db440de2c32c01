// The by-the-definition reference for md's pair kernels: random atoms in a
// periodic cube and the O(N^2) Lennard-Jones sum over all pairs with the
// minimum image, in double (the unit test and `strata validate` compare the
// neighbour-list kernels with it).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "models/md/atom_system.hpp"

namespace strata::md {

// n atoms uniform in [0, box)^3, none closer than min_distance to another
// (moderate forces, as in a liquid), at rest.
inline HostParticles random_atoms(int n, double box, double min_distance, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, box);
  HostParticles h;
  while (static_cast<int>(h.size()) < n) {
    const double r[3] = {u(gen), u(gen), u(gen)};
    bool clash = false;
    for (std::size_t j = 0; j < h.size() && !clash; ++j) {
      double d2 = 0;
      for (int a = 0; a < 3; ++a) {
        double d = r[a] - h.position[3 * j + static_cast<std::size_t>(a)];
        d -= box * std::round(d / box);
        d2 += d * d;
      }
      clash = d2 < min_distance * min_distance;
    }
    if (clash) continue;
    for (double v : r) {
      h.position.push_back(v);
      h.velocity.push_back(0);
    }
    h.index.push_back(static_cast<std::int64_t>(h.size()));
  }
  return h;
}

struct DirectSum {
  std::vector<double> force, scale;   // per atom by index: F (3), and sum_j |f_ij| (the rounding scale)
  double energy = 0, virial = 0, energy_scale = 0;
};

// pos: 3 per atom, by index; the box a cube of side `box`, at least twice the cutoff.
inline DirectSum direct_sum(const std::vector<double>& pos, double box, double epsilon, double sigma, double cutoff,
                            bool shift) {
  const std::size_t n = pos.size() / 3;
  DirectSum r;
  r.force.assign(3 * n, 0);
  r.scale.assign(n, 0);
  const double rc2 = cutoff * cutoff;
  const double sr6c = std::pow(sigma / cutoff, 6);
  const double offset = shift ? 4 * epsilon * (sr6c * sr6c - sr6c) : 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      double d[3], r2 = 0;
      for (int a = 0; a < 3; ++a) {
        d[a] = pos[3 * i + static_cast<std::size_t>(a)] - pos[3 * j + static_cast<std::size_t>(a)];
        d[a] -= box * std::round(d[a] / box);
        r2 += d[a] * d[a];
      }
      if (r2 >= rc2) continue;
      const double sr6 = std::pow(sigma * sigma / r2, 3);
      const double fr = 24 * epsilon * (2 * sr6 * sr6 - sr6) / r2;   // |F| / r
      for (int a = 0; a < 3; ++a) {
        r.force[3 * i + static_cast<std::size_t>(a)] += fr * d[a];
        r.force[3 * j + static_cast<std::size_t>(a)] -= fr * d[a];
      }
      const double mag = std::abs(fr) * std::sqrt(r2);
      r.scale[i] += mag;
      r.scale[j] += mag;
      r.energy += 4 * epsilon * (sr6 * sr6 - sr6) - offset;
      r.energy_scale += 4 * epsilon * (sr6 * sr6 + sr6) + std::abs(offset) + fr * r2;
      r.virial += fr * r2;
    }
  return r;
}

// Rounding bound per atom, in units of eps x sum_j |f_ij|: each pair term
// is good to a few ulp (10 operations) and a sum of m terms adds at most m
// ulp of the sum of magnitudes; m <= 120 at liquid densities.
inline constexpr double kForceRoundings = 130;

}  // namespace strata::md
