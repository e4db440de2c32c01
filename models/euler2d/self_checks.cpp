#include "models/euler2d/self_checks.hpp"

#include <cmath>

#include "engine/grid/grid_simulation.hpp"
#include "models/euler2d/euler2d_simulation.hpp"

namespace strata::euler2d {
namespace {

// A case run to its end without output: its first and last diagnostics
// rows, and max |w| at the end.
struct Outcome {
  std::vector<double> first, last;
  double max_w = 0;
};

Outcome run_case(RunContext& ctx, const Params& p) {
  Outcome o;
  grid::run_quietly<Euler2dSimulation>(ctx, p, [&](auto& sim, bool start) {
    (start ? o.first : o.last) = sim.last_diagnostics();
    if (!start) o.max_w = sim.max_abs_primitive(2);
  });
  return o;
}

}  // namespace

// miniWeather's own test (c/CMakeLists.txt, check_output.sh): the thermal
// case at 100 x 50 for 400 s must change its mass by less than 1e-13
// (double precision; its C++ single-precision build allows 1e-9) and its
// total energy by a negative amount of magnitude below 4.5e-5. And the
// balanced atmosphere at rest must stay at rest.
std::vector<CheckResult> self_checks(RunContext& ctx) {
  const bool fp32 = ctx.precision == Precision::fp32;
  Params p;
  p.sim_time = 400;
  p.output_interval = 0;
  const std::vector<double> last = run_case(ctx, p).last;
  std::vector<CheckResult> out;
  CheckResult m;
  m.name = "euler2d thermal 100x50, 400 s: relative mass change";
  m.value = last[2];
  m.reference = 0;
  m.tolerance = fp32 ? 1e-9 : 1e-13;
  m.pass = std::fabs(m.value) < m.tolerance;
  m.detail = fp32 ? "miniWeather's single-precision test: |d_mass| < 1e-9" : "miniWeather's test: |d_mass| < 1e-13";
  out.push_back(m);
  CheckResult e;
  e.name = "euler2d thermal 100x50, 400 s: relative total energy change";
  e.value = last[3];
  e.reference = -2.25e-5;
  e.tolerance = 2.25e-5;
  e.pass = e.value < 0 && e.value > -4.5e-5;
  e.detail = "miniWeather's test: d_te negative, |d_te| < 4.5e-5 (hyperviscosity only removes energy)";
  out.push_back(e);

  Params rest;
  rest.c = Case::hydrostatic;
  rest.sim_time = 100;
  rest.output_interval = 0;
  const double max_w = run_case(ctx, rest).max_w;
  CheckResult r;
  r.name = "euler2d hydrostatic atmosphere at rest, 100 s: max |w|";
  r.value = max_w;
  r.reference = 0;
  r.tolerance = fp32 ? 1e-3 : 1e-10;
  r.pass = std::fabs(r.value) <= r.tolerance;
  r.detail = "m/s; the discrete balance holds to the rounding of the face pressure (one ulp of p, 0.008 Pa in fp32)";
  out.push_back(r);
  return out;
}

}  // namespace strata::euler2d
