// miniWeather's initial states and hydrostatic backgrounds, evaluated in
// double on the host.
#pragma once

#include <vector>

#include "models/euler2d/params.hpp"

namespace strata::euler2d {

// amp cos^2 of the scaled distance from (x0, z0), zero beyond the ellipse.
double ellipse_cosine(double x, double z, double amp, double x0, double z0, double xrad, double zrad);

// Perturbations (density r, winds u and w, potential temperature t) and the
// background (hr, ht) of a case at (x, z).
struct Point {
  double r = 0, u = 0, w = 0, t = 0, hr = 0, ht = 0;
};

Point sample(Case c, double x, double z);

// Three-point Gauss-Legendre quadrature on [0, 1].
inline constexpr double kQPoints[3] = {0.112701665379258311482073460022E0, 0.500000000000000000000000000000E0,
                                0.887298334620741688517926539980E0};
inline constexpr double kQWeights[3] = {0.277777777777777777777777777779E0, 0.444444444444444444444444444444E0,
                                 0.277777777777777777777777777779E0};

// The background of a case, by global vertical index (kernels' Background layout).
struct Profiles {
  std::vector<double> dens_cell, dens_theta_cell;            // cells -2 .. nz+1 at k + 2
  std::vector<double> dens_int, dens_theta_int, pressure_int; // faces 0 .. nz
};

Profiles profiles(const Params& p);

}  // namespace strata::euler2d
