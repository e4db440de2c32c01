// The [shallow_water] table: its schema, and the parameters read from it
// and checked across keys (an input error names the key, exit 2).
#pragma once

#include <array>
#include <string>

#include "engine/grid/grid.hpp"

namespace strata {
class Config;
class Schema;
}  // namespace strata

namespace strata::shallow_water {

using grid::Boundary;
using grid::index_t;

enum class Initial { gaussian, dam_break, zonal_jet, vortex, barotropic_instability };

// The SSP-RK3 stability limit of the Courant number (CourantCoefficients in
// kernels/stencil/shallow_water.hpp): sqrt(3)/2. The cfl key may go up to
// kMaxCfl, a little below, so that the initial state never reads as unstable.
inline constexpr double kCourantLimit = 0.8660254037844386;
inline constexpr double kMaxCfl = 0.85;

struct Params {
  index_t nx = 128, ny = 128;
  double lx = 4.0e6, ly = 4.0e6;
  double g = 9.81;
  double H = 1000;  // depth of the resting layer (mean depth for the jets)
  double f0 = 1e-4, beta = 0;
  Initial initial = Initial::gaussian;
  double cfl = 0.5;
  double viscosity = 0;
  double sim_time = 86400;
  double output_interval = 10800;
  Boundary boundary_x = Boundary::periodic, boundary_y = Boundary::periodic;
  grid::Decomposition decomposition{{0, 0, 0}, "shallow_water.decomposition", ""};
  double centre_x = 0.5, centre_y = 0.5;  // fractions of lx, ly
  double gaussian_amplitude = 10, gaussian_width = 2.0e5;
  double dam_h_left = 2, dam_h_right = 1;
  double jet_speed = 20, jet_width = 2.0e5, perturbation_amplitude = 1;
  double vortex_speed = 20, vortex_radius = 3.0e5;

  double dx() const { return lx / static_cast<double>(nx); }
  double dy() const { return ly / static_cast<double>(ny); }
  // f = f0 + beta (y - ly/2): f0 is f at the middle of the domain.
  double coriolis(double y) const { return f0 + beta * (y - 0.5 * ly); }
  grid::GridSpec spec() const;
};

void declare_schema(Schema& s);
// Reads and checks [shallow_water]; throws InputError naming the key.
Params read_params(const Config& c);
const char* to_string(Initial i);

}  // namespace strata::shallow_water
