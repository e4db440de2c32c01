// The [euler2d] schema and the parameters read from it.
#include "models/euler2d/params.hpp"

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"

namespace strata::euler2d {
namespace {

Case case_of(const std::string& s) {
  for (std::size_t c = 0; c < kCaseNames.size(); ++c)
    if (kCaseNames[c] == s) return static_cast<Case>(c);
  return Case::thermal;
}

}  // namespace

Params read_params(const Config& c) {
  Params p;
  p.c = case_of(c.string("euler2d.case"));
  p.nx = c.integer("euler2d.nx");
  p.nz = c.integer("euler2d.nz");
  p.sim_time = c.real("euler2d.sim_time");
  p.output_interval = c.real("euler2d.output_interval");
  p.cfl = c.real("euler2d.cfl");
  p.hv_beta = c.real("euler2d.hv_beta");
  p.decomposition = grid::read_decomposition(c, "euler2d.decomposition", 2);
  if (!step_count(p.sim_time, p.dt()))
    c.fail("euler2d.sim_time", step_count_problem(p.sim_time, p.dt(), "dt = min(dx, dz) cfl / 450 m/s"));
  return p;
}

void declare_schema(Schema& s) {
  s.choice("euler2d.case", "thermal", kCaseNames,
           "miniWeather's test case: thermal (a warm bubble rising in a neutral atmosphere, run 1000 s), collision "
           "(a warm and a cold bubble colliding, 700 s), gravity_waves (15 m/s wind over a stable atmosphere, forced "
           "near the ground), density_current (a cold bubble falling to the ground, 600 s), injection (a cold jet "
           "entering at the left near the top, 1200 s); or hydrostatic (thermal's atmosphere without the bubble: "
           "it must stay at rest, a test case that miniWeather does not have)");
  const Range cells{4.0, 1e6};
  s.integer("euler2d.nx", 100, "cells", cells, "cells along x (the domain is 20 km long: dx = 20 km / nx)");
  s.integer("euler2d.nz", 50, "cells", cells,
            "cells along z (the domain is 10 km high: dz = 10 km / nz; keep nx = 2 nz for square cells)");
  s.real("euler2d.sim_time", 1000.0, "s", Range{0.0, {}, true},
         "model time to simulate; the last step is shortened to end exactly there")
      .restart_safe = true;
  s.real("euler2d.output_interval", 10.0, "s", Range{0.0, {}},
         "model time between output frames (0: the first and last only)");
  s.real("euler2d.cfl", 1.5, "1", Range{0.0, 10.0, true},
         "Courant number of the time step: dt = min(dx, dz) cfl / 450 m/s, 450 m/s being the fastest wave "
         "(sound plus wind) the scheme assumes")
      .aliases = {"dt", "time_step", "timestep"};
  s.real("euler2d.hv_beta", 0.05, "1", Range{0.0, 1.0},
         "strength of the hyperviscosity: a fourth-order diffusion with coefficient hv_beta dx^4 / (16 dt) per "
         "Runge-Kutta stage (dt the stage's length)");
  grid::declare_decomposition(s, "euler2d.decomposition", 2, "xz");
}

}  // namespace strata::euler2d
