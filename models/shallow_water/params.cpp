#include "models/shallow_water/params.hpp"

#include <cmath>
#include <utility>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/runtime/step_count.hpp"
#include "models/shallow_water/initial_state.hpp"

namespace strata::shallow_water {

namespace {

constexpr const char* kInitialNames[] = {"gaussian", "dam_break", "zonal_jet", "vortex", "barotropic_instability"};

Initial initial_of(const std::string& s) {
  for (int i = 0; i < 5; ++i)
    if (s == kInitialNames[i]) return static_cast<Initial>(i);
  return Initial::gaussian;
}

Boundary boundary_of(const std::string& s) { return s == "wall" ? Boundary::wall : Boundary::periodic; }

}  // namespace

const char* to_string(Initial i) { return kInitialNames[static_cast<int>(i)]; }

grid::GridSpec Params::spec() const {
  grid::GridSpec s;
  s.dims = 2;
  s.n = {nx, ny, 1};
  s.d = {dx(), dy(), 1.0};
  s.origin = {0, 0, 0};
  s.boundary[0] = {boundary_x, boundary_x};
  s.boundary[1] = {boundary_y, boundary_y};
  s.halo = 1;
  s.decomposition = decomposition;
  return s;
}

void declare_schema(Schema& s) {
  const Range cells{1.0, 1e6};
  const Range positive{0.0, {}, true};
  const Range fraction{0.0, 1.0};
  s.integer("shallow_water.nx", 128, "cells", cells, "cells along x");
  s.integer("shallow_water.ny", 128, "cells", cells, "cells along y (1: a one-dimensional run along x)");
  s.real("shallow_water.lx", 4.0e6, "m", positive, "domain length along x (the domain is [0, lx] x [0, ly])");
  s.real("shallow_water.ly", 4.0e6, "m", positive, "domain length along y");
  s.real("shallow_water.g", 9.81, "m s-2", positive, "gravitational acceleration");
  s.real("shallow_water.H", 1000.0, "m", positive,
         "depth of the resting layer: the background of gaussian, the far field of vortex, the mean depth of "
         "zonal_jet and barotropic_instability (dam_break uses dam_h_left and dam_h_right)");
  s.real("shallow_water.f0", 1e-4, "s-1", Range{}, "Coriolis parameter at y = ly/2 (0: no rotation)");
  s.real("shallow_water.beta", 0.0, "m-1 s-1", Range{}, "beta-plane gradient: f = f0 + beta (y - ly/2) (0: f-plane)");
  s.choice("shallow_water.initial", "gaussian",
           {"gaussian", "dam_break", "zonal_jet", "vortex", "barotropic_instability"},
           "initial state: gaussian (a bump of h on a resting layer: gravity waves), dam_break (Stoker: h_left "
           "left of the dam, h_right right of it, at rest), zonal_jet (a jet in exact discrete geostrophic "
           "balance: a steady state; needs boundary_x periodic, boundary_y wall), vortex (a Gaussian-profile "
           "vortex in gradient-wind balance), barotropic_instability (the balanced jet plus a small bump of h "
           "that grows and rolls the jet up)");
  s.real("shallow_water.cfl", 0.5, "1", Range{0.0, kMaxCfl, true},
         "Courant number of the fixed time step: dt = cfl / max over cells of [(|u| + c)/dx + (|v| + c)/dy + "
         "1.38 viscosity (1/dx^2 + 1/dy^2)], c = sqrt(g h), from the initial state. SSP-RK3 on this scheme is "
         "stable up to sqrt(3)/2 = 0.866; a run whose max_courant grows past it fails (exit 3)")
      .aliases = {"dt", "time_step", "timestep"};
  s.real("shallow_water.viscosity", 0.0, "m2 s-1", Range{0.0, {}},
         "momentum viscosity nu in (nu/h) div(h grad u): conserves momentum, only removes energy; damps the "
         "grid-scale oscillations of shocks (dam_break). 0: the inviscid, energy-conserving scheme");
  s.real("shallow_water.sim_time", 86400.0, "s", positive, "model time to simulate").restart_safe = true;
  s.real("shallow_water.output_interval", 10800.0, "s", Range{0.0, {}},
         "model time between output frames (0: the first and last only)");
  s.choice("shallow_water.boundary_x", "periodic", {"periodic", "wall"},
           "x sides: periodic, or wall (free-slip: u = 0 on the wall face, no mass flux)");
  s.choice("shallow_water.boundary_y", "periodic", {"periodic", "wall"},
           "y sides: periodic, or wall (free-slip: v = 0 on the wall face, no mass flux)");
  grid::declare_decomposition(s, "shallow_water.decomposition", 2);
  s.real("shallow_water.centre_x", 0.5, "1", fraction,
         "x of the bump, the vortex, the jet's perturbation or the dam, as a fraction of lx");
  s.real("shallow_water.centre_y", 0.5, "1", fraction,
         "y of the bump, the vortex or the jet's axis, as a fraction of ly");
  s.real("shallow_water.gaussian_amplitude", 10.0, "m", Range{}, "gaussian: height of the bump above H");
  s.real("shallow_water.gaussian_width", 2.0e5, "m", positive,
         "gaussian: standard deviation of the bump, h = H + a exp(-r^2 / (2 width^2))");
  s.real("shallow_water.dam_h_left", 2.0, "m", positive, "dam_break: depth left of the dam (x < centre_x lx)");
  s.real("shallow_water.dam_h_right", 1.0, "m", positive, "dam_break: depth right of the dam");
  s.real("shallow_water.jet_speed", 20.0, "m s-1", Range{},
         "zonal_jet, barotropic_instability: peak of u = jet_speed exp(-((y - centre_y ly) / jet_width)^2)");
  s.real("shallow_water.jet_width", 2.0e5, "m", positive,
         "zonal_jet, barotropic_instability: e-folding half-width of the jet");
  s.real("shallow_water.perturbation_amplitude", 1.0, "m", Range{},
         "barotropic_instability: height of the Gaussian bump of h (width jet_width) added at (centre_x lx, "
         "centre_y ly) to start the instability");
  s.real("shallow_water.vortex_speed", 20.0, "m s-1", Range{},
         "vortex: peak azimuthal speed, at r = vortex_radius; > 0 turns anticlockwise (cyclonic where f > 0). "
         "v = speed (r/R) exp((1 - r^2/R^2)/2), h from g dh/dr = f v + v^2/r");
  s.real("shallow_water.vortex_radius", 3.0e5, "m", positive, "vortex: radius of the peak speed");
}

Params read_params(const Config& c) {
  Params p;
  p.nx = c.integer("shallow_water.nx");
  p.ny = c.integer("shallow_water.ny");
  p.lx = c.real("shallow_water.lx");
  p.ly = c.real("shallow_water.ly");
  p.g = c.real("shallow_water.g");
  p.H = c.real("shallow_water.H");
  p.f0 = c.real("shallow_water.f0");
  p.beta = c.real("shallow_water.beta");
  p.initial = initial_of(c.string("shallow_water.initial"));
  p.cfl = c.real("shallow_water.cfl");
  p.viscosity = c.real("shallow_water.viscosity");
  p.sim_time = c.real("shallow_water.sim_time");
  p.output_interval = c.real("shallow_water.output_interval");
  p.boundary_x = boundary_of(c.string("shallow_water.boundary_x"));
  p.boundary_y = boundary_of(c.string("shallow_water.boundary_y"));
  p.decomposition = grid::read_decomposition(c, "shallow_water.decomposition", 2);
  p.centre_x = c.real("shallow_water.centre_x");
  p.centre_y = c.real("shallow_water.centre_y");
  p.gaussian_amplitude = c.real("shallow_water.gaussian_amplitude");
  p.gaussian_width = c.real("shallow_water.gaussian_width");
  p.dam_h_left = c.real("shallow_water.dam_h_left");
  p.dam_h_right = c.real("shallow_water.dam_h_right");
  p.jet_speed = c.real("shallow_water.jet_speed");
  p.jet_width = c.real("shallow_water.jet_width");
  p.perturbation_amplitude = c.real("shallow_water.perturbation_amplitude");
  p.vortex_speed = c.real("shallow_water.vortex_speed");
  p.vortex_radius = c.real("shallow_water.vortex_radius");

  const bool jet = p.initial == Initial::zonal_jet || p.initial == Initial::barotropic_instability;
  if (jet && p.boundary_x != Boundary::periodic)
    c.fail("shallow_water.boundary_x",
           std::string(to_string(p.initial)) + " is a zonal jet, uniform in x: it needs boundary_x = \"periodic\"");
  if (jet && p.boundary_y != Boundary::wall)
    c.fail("shallow_water.boundary_y",
           std::string(to_string(p.initial)) +
               " balances the jet against walls in y (a periodic jet cannot be in discrete balance at the "
               "seam): it needs boundary_y = \"wall\"");
  // A depth so large that g h overflows leaves no wave speed and no time
  // step: that is the depth's fault (or g's), not sim_time's.
  const bool dam = p.initial == Initial::dam_break;
  for (const auto& [key, h] :
       {std::pair{dam ? "shallow_water.dam_h_left" : "shallow_water.H", dam ? p.dam_h_left : p.H},
        std::pair{"shallow_water.dam_h_right", dam ? p.dam_h_right : 0.0}}) {
    if (!std::isfinite(std::sqrt(p.g * h))) {
      c.fail(h >= p.g ? key : "shallow_water.g", "the gravity-wave speed sqrt(g h) of a depth of " + shortest_text(h) +
                                                     " m with g = " + shortest_text(p.g) +
                                                     " m s-2 overflows: no time step can follow it");
    }
  }
  const InitialState state(p);
  if (!state.problem().empty()) c.fail(state.problem_key(), state.problem());
  // dt comes from the initial state; a sample of it bounds dt from above,
  // so a span it makes too long is too long for the full scan too.
  const double dt = sampled_dt(p, state);
  if (!step_count(p.sim_time, dt))
    c.fail("shallow_water.sim_time",
           step_count_problem(p.sim_time, dt, "dt (at most, from shallow_water.cfl and the initial state)"));
  return p;
}

}  // namespace strata::shallow_water
