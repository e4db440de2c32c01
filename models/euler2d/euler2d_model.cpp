// The `euler2d` model: a dry, stratified, compressible, non-hydrostatic
// atmosphere in a 20 km x 10 km x-z slice (periodic in x, solid walls in z),
// exactly as the miniWeather mini-app (M. Norman, ORNL) defines it: its
// equations, its five test cases, its fourth-order finite volumes with
// hyperviscosity, its three-stage Runge-Kutta with alternating dimensional
// splitting, its time step rule and its mass and energy diagnostics. The
// numerics are in kernels/stencil/euler2d.hpp, the run in
// euler2d_simulation.hpp; this file registers the model.
#include <cmath>
#include <memory>
#include <string>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/grid/grid_simulation.hpp"
#include "engine/runtime/format.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "models/euler2d/euler2d_simulation.hpp"
#include "models/euler2d/params.hpp"

namespace strata::euler2d {
namespace {

class Euler2dModel final : public ModelOf<Params, read_params, declare_schema> {
 public:
  std::string_view name() const override { return "euler2d"; }
  std::string_view summary() const override {
    return "Dry compressible atmosphere in a 20 km x 10 km x-z slice (rising and colliding bubbles, gravity waves, "
           "density current, injection), miniWeather's scheme: 4th-order finite volumes, hyperviscosity, 3-stage "
           "Runge-Kutta, alternating dimensional splitting";
  }
  std::vector<CheckResult> self_checks(RunContext& ctx) const override;

 protected:
  void plan(const RunContext& ctx, const Params& p) const override {
    const grid::Grid g(ctx.mpi, p.spec());
    const auto r = g.ranks();
    ctx.out << format("plan: euler2d %s, %lld x %lld cells (dx = %.6g m, dz = %.6g m) over %d x %d ranks; "
                      "dt = %.6g s (cfl %.3g at 450 m/s), %lld steps to t = %.6g s\n",
                      p.case_name().c_str(), static_cast<long long>(p.nx), static_cast<long long>(p.nz), p.dx(),
                      p.dz(), r[0], r[1], p.dt(), p.cfl, static_cast<long long>(p.steps()), p.sim_time);
  }

  MemoryPlan memory(const RunContext& ctx, const Params& p) const override {
    const std::size_t elem = ctx.precision == Precision::fp32 ? 4 : 8;
    // state, state_tmp, fluxes (4 each), the gravity-wave source, halo buffers (< 1 field).
    const std::size_t one = grid::field_bytes(ctx.mpi, p.spec(), 1, elem);
    // Output and checkpoints: host copies (double) of a field, and the frame
    // in flight to the background writer (4 fields in double).
    return MemoryPlan::of(ctx.device, 14 * one, 2 * one * 8 / elem + 4 * one * 8 / elem,
                          "use fewer cells (euler2d.nx, nz) or more ranks");
  }

  std::unique_ptr<Simulation> start(RunContext& ctx, const Params& p) const override {
    return start_in_precision<Euler2dSimulation>(ctx, p);
  }
};

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

// miniWeather's own test (c/CMakeLists.txt, check_output.sh): the thermal
// case at 100 x 50 for 400 s must change its mass by less than 1e-13
// (double precision; its C++ single-precision build allows 1e-9) and its
// total energy by a negative amount of magnitude below 4.5e-5. And the
// balanced atmosphere at rest must stay at rest.
std::vector<CheckResult> Euler2dModel::self_checks(RunContext& ctx) const {
  const bool fp32 = ctx.precision == Precision::fp32;
  Params p;
  p.sim_time = 400;
  p.output_interval = 0;
  const std::vector<double> last = run_case(ctx, p).last;
  std::vector<CheckResult> out;
  CheckResult m = CheckResult::within(
      "euler2d thermal 100x50, 400 s: relative mass change", last[2], 0, fp32 ? 1e-9 : 1e-13,
      fp32 ? "miniWeather's single-precision test: |d_mass| < 1e-9" : "miniWeather's test: |d_mass| < 1e-13");
  m.pass = std::fabs(m.value) < m.tolerance;   // miniWeather's bounds are strict
  out.push_back(m);
  CheckResult e = CheckResult::within(
      "euler2d thermal 100x50, 400 s: relative total energy change", last[3], -2.25e-5, 2.25e-5,
      "miniWeather's test: d_te negative, |d_te| < 4.5e-5 (hyperviscosity only removes energy)");
  e.pass = e.value < 0 && e.value > -4.5e-5;
  out.push_back(e);

  Params rest;
  rest.c = Case::hydrostatic;
  rest.sim_time = 100;
  rest.output_interval = 0;
  const double max_w = run_case(ctx, rest).max_w;
  out.push_back(CheckResult::within(
      "euler2d hydrostatic atmosphere at rest, 100 s: max |w|", max_w, 0, fp32 ? 1e-3 : 1e-10,
      "m/s; the discrete balance holds to the rounding of the face pressure (one ulp of p, 0.008 Pa in fp32)"));
  return out;
}

}  // namespace
}  // namespace strata::euler2d

using Euler2dModel = strata::euler2d::Euler2dModel;
STRATA_REGISTER_MODEL(Euler2dModel);
