#include "models/nbody/initial_state.hpp"

#include <cmath>
#include <numbers>
#include <vector>

#include "engine/particles/h5md_input.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "kernels/rng/philox.hpp"

namespace strata::nbody {

namespace {

using particles::HostParticles;

struct Uniform {
  rng::PhiloxStream s;
  // (0, 1] with 53 random bits.
  double operator()() {
    const std::uint32_t a = s.next_u32();
    return rng::uniform_double(a, s.next_u32());
  }
};

void isotropic(Uniform& u, double length, double* out) {
  const double z = (1 - 2 * u()) * length;
  const double phi = 2 * std::numbers::pi * u();
  const double rho = std::sqrt(std::max(length * length - z * z, 0.0));
  out[0] = rho * std::cos(phi);
  out[1] = rho * std::sin(phi);
  out[2] = z;
}

// A Plummer sphere of total mass 1 in Henon units (E = -1/4, scale radius
// 3 pi / 16), by Aarseth, Henon & Wielen (1974, A&A 37, 183): radius from
// the inverted cumulative mass m(r) = r^3 (1 + r^2)^(-3/2), cut at 10 scale
// radii; speed q v_esc with q drawn by rejection from q^2 (1 - q^2)^(7/2)
// (whose maximum is below 0.1).
void plummer_body(Uniform& u, double* x, double* v) {
  double r = 0;
  do {
    const double m = u();
    r = 1 / std::sqrt(std::pow(m, -2.0 / 3.0) - 1);
  } while (!(r <= 10));
  double q = 0, g = 0;
  do {
    q = u();
    g = 0.1 * u();
  } while (g > q * q * std::pow(1 - q * q, 3.5));
  const double v_esc = std::sqrt(2.0) * std::pow(1 + r * r, -0.25);
  const double length = 3 * std::numbers::pi / 16;   // Plummer units -> Henon units
  isotropic(u, r * length, x);
  isotropic(u, q * v_esc / std::sqrt(length), v);
}

// Removes the centre-of-mass position and velocity (exact tree sums, so the
// same for any decomposition).
void to_centre_of_mass(HostParticles& p, const MpiContext& mpi, std::int64_t n, std::int64_t first) {
  std::vector<double> blocks(p.size() * 7);
  for (std::size_t k = 0; k < p.size(); ++k) {
    blocks[7 * k] = p.mass[k];
    for (int d = 0; d < 3; ++d) {
      blocks[7 * k + 1 + d] = p.mass[k] * p.position[3 * k + d];
      blocks[7 * k + 4 + d] = p.mass[k] * p.velocity[3 * k + d];
    }
  }
  const std::vector<double> sum = tree_sum(mpi, n, first, blocks, 7);
  for (std::size_t k = 0; k < p.size(); ++k)
    for (int d = 0; d < 3; ++d) {
      p.position[3 * k + d] -= sum[1 + d] / sum[0];
      p.velocity[3 * k + d] -= sum[4 + d] / sum[0];
    }
}

}  // namespace

std::int64_t initial_count(const InitialSpec& spec) {
  if (spec.kind == "two_body") return 2;
  if (spec.kind == "file") return spec.file_n;
  return spec.n;
}

HostParticles initial_bodies(const InitialSpec& spec, const MpiContext& mpi, std::int64_t& n, std::string* read_from) {
  if (spec.kind == "file") {
    particles::H5mdSnapshot snap =
        particles::read_h5md(spec.file, spec.file_key, {spec.file_frame, "nbody.initial_frame"}, mpi);
    if (read_from != nullptr) *read_from = particles::describe_frame(snap, spec.file);
    n = snap.n;
    if (!snap.has_mass) snap.particles.mass.assign(snap.particles.size(), 1.0 / static_cast<double>(n));
    return std::move(snap.particles);
  }
  n = initial_count(spec);
  const particles::Share mine = particles::even_share(n, mpi.rank(), mpi.size());
  HostParticles p;
  p.position.resize(3 * static_cast<std::size_t>(mine.count));
  p.velocity.resize(p.position.size());
  p.mass.assign(static_cast<std::size_t>(mine.count), 1.0 / static_cast<double>(n));
  for (std::int64_t k = 0; k < mine.count; ++k) {
    const std::int64_t i = mine.first + k;
    p.index.push_back(i);
    double* x = p.position.data() + 3 * k;
    double* v = p.velocity.data() + 3 * k;
    Uniform u{rng::PhiloxStream(spec.seed, static_cast<std::uint64_t>(i), 0)};
    if (spec.kind == "plummer") {
      plummer_body(u, x, v);
    } else if (spec.kind == "uniform_sphere") {
      // Uniform in the unit sphere (rejection from the cube), at rest: a cold collapse.
      do {
        for (int d = 0; d < 3; ++d) x[d] = 2 * u() - 1;
      } while (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] > 1);
      v[0] = v[1] = v[2] = 0;
    } else if (spec.kind == "collision") {
      // Two Plummer spheres of mass 1/2 each (speeds scaled by sqrt(1/2)
      // to stay in virial equilibrium), centres `separation` apart along x
      // and `impact_parameter` along y, approaching at `approach_speed`.
      plummer_body(u, x, v);
      const double side = i < n / 2 ? -1 : 1;
      for (int d = 0; d < 3; ++d) v[d] *= std::sqrt(0.5);
      x[0] += side * 0.5 * spec.separation;
      x[1] += side * 0.5 * spec.impact_parameter;
      v[0] -= side * 0.5 * spec.approach_speed;
    } else {   // two_body
      // Equal masses 1/2 on a Kepler ellipse of semi-major axis a and
      // eccentricity e, starting at apocentre r = a (1 + e) with relative
      // speed sqrt(G M (1 - e) / (a (1 + e))) (vis-viva), M = 1.
      const double a = spec.semi_major_axis, e = spec.eccentricity;
      const double r = a * (1 + e), speed = std::sqrt(spec.G * (1 - e) / (a * (1 + e)));
      const double side = i == 0 ? -1 : 1;
      x[0] = side * 0.5 * r;
      x[1] = x[2] = 0;
      v[0] = v[2] = 0;
      v[1] = side * 0.5 * speed;
    }
  }
  if (spec.kind != "two_body") to_centre_of_mass(p, mpi, n, mine.first);
  return p;
}

}  // namespace strata::nbody
