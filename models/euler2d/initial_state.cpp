// miniWeather's initial states: hydrostatic backgrounds and the cases'
// perturbations.
#include "models/euler2d/initial_state.hpp"

#include <cmath>

namespace strata::euler2d {
namespace {

// Hydrostatic balance with constant potential temperature theta0 = 300 K:
// Exner pressure 1 - g z / (cp theta0), rho theta from p = C0 (rho theta)^gamma.
void hydro_const_theta(double z, double& r, double& t) {
  const double theta0 = 300., exner0 = 1.;
  t = theta0;
  const double exner = exner0 - k::kGrav * z / (k::kCp * theta0);
  const double p = k::kP0 * std::pow(exner, k::kCp / k::kRd);
  const double rt = std::pow(p / k::kC0, 1. / k::kGamma);
  r = rt / t;
}

// Hydrostatic balance with constant Brunt-Vaisala frequency n.
void hydro_const_bvfreq(double z, double n, double& r, double& t) {
  const double theta0 = 300., exner0 = 1.;
  t = theta0 * std::exp(n * n / k::kGrav * z);
  const double exner = exner0 - k::kGrav * k::kGrav / (k::kCp * n * n) * (t - theta0) / (t * theta0);
  const double p = k::kP0 * std::pow(exner, k::kCp / k::kRd);
  const double rt = std::pow(p / k::kC0, 1. / k::kGamma);
  r = rt / t;
}

}  // namespace

// amp cos^2 of the scaled distance from (x0, z0), zero beyond the ellipse.
double ellipse_cosine(double x, double z, double amp, double x0, double z0, double xrad, double zrad) {
  const double dist = std::sqrt(((x - x0) / xrad) * ((x - x0) / xrad) + ((z - z0) / zrad) * ((z - z0) / zrad)) *
                      k::kPi / 2.;
  return dist <= k::kPi / 2. ? amp * std::pow(std::cos(dist), 2.) : 0.;
}

Point sample(Case c, double x, double z) {
  Point s;
  if (c == Case::gravity_waves) {
    hydro_const_bvfreq(z, 0.02, s.hr, s.ht);
    s.u = 15.;
    return s;
  }
  hydro_const_theta(z, s.hr, s.ht);
  switch (c) {
    case Case::thermal: s.t += ellipse_cosine(x, z, 3., k::kXLen / 2, 2000., 2000., 2000.); break;
    case Case::collision:
      s.t += ellipse_cosine(x, z, 20., k::kXLen / 2, 2000., 2000., 2000.);
      s.t += ellipse_cosine(x, z, -20., k::kXLen / 2, 8000., 2000., 2000.);
      break;
    case Case::density_current: s.t += ellipse_cosine(x, z, -20., k::kXLen / 2, 5000., 4000., 2000.); break;
    default: break;
  }
  return s;
}

Profiles profiles(const Params& p) {
  Profiles b;
  const index_t nz = p.nz;
  const double dz = p.dz();
  for (index_t kc = -k::kHalo; kc < nz + k::kHalo; ++kc) {
    // miniWeather averages over the quadrature weights at the cell centre.
    const double z = (static_cast<double>(kc) + 0.5) * dz;
    double dens = 0, dens_theta = 0;
    for (int q = 0; q < 3; ++q) {
      const Point s = sample(p.c, 0., z);
      dens = dens + s.hr * kQWeights[q];
      dens_theta = dens_theta + s.hr * s.ht * kQWeights[q];
    }
    b.dens_cell.push_back(dens);
    b.dens_theta_cell.push_back(dens_theta);
  }
  for (index_t kf = 0; kf <= nz; ++kf) {
    const Point s = sample(p.c, 0., static_cast<double>(kf) * dz);
    b.dens_int.push_back(s.hr);
    b.dens_theta_int.push_back(s.hr * s.ht);
    b.pressure_int.push_back(k::kC0 * std::pow(s.hr * s.ht, k::kGamma));
  }
  return b;
}

}  // namespace strata::euler2d
