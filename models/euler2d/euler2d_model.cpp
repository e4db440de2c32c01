// The `euler2d` model: a dry, stratified, compressible, non-hydrostatic
// atmosphere in a 20 km x 10 km x-z slice (periodic in x, solid walls in z),
// exactly as the miniWeather mini-app (M. Norman, ORNL) defines it: its
// equations, its five test cases, its fourth-order finite volumes with
// hyperviscosity, its three-stage Runge-Kutta with alternating dimensional
// splitting, its time step rule and its mass and energy diagnostics. The
// numerics are in kernels/stencil/euler2d.hpp, the run in
// euler2d_simulation.hpp; this file registers the model.
#include <cstdio>
#include <memory>
#include <string>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "models/euler2d/euler2d_simulation.hpp"
#include "models/euler2d/params.hpp"
#include "models/euler2d/self_checks.hpp"

namespace strata::euler2d {
namespace {

class Euler2dModel final : public Model {
 public:
  std::string_view name() const override { return "euler2d"; }
  std::string_view summary() const override {
    return "Dry compressible atmosphere in a 20 km x 10 km x-z slice (rising and colliding bubbles, gravity waves, "
           "density current, injection), miniWeather's scheme: 4th-order finite volumes, hyperviscosity, 3-stage "
           "Runge-Kutta, alternating dimensional splitting";
  }
  void declare(Schema& s) const override { declare_schema(s); }
  void check(const Config& c) const override { (void)read_params(c); }

  void plan(const RunContext& ctx) const override {
    const Params p = read_params(*ctx.config);
    const grid::Grid g(ctx.mpi, p.spec());
    const auto r = g.ranks();
    char text[400];
    std::snprintf(text, sizeof text,
                  "plan: euler2d %s, %lld x %lld cells (dx = %.6g m, dz = %.6g m) over %d x %d ranks; dt = %.6g s "
                  "(cfl %.3g at 450 m/s), %lld steps to t = %.6g s\n",
                  p.case_name().c_str(), static_cast<long long>(p.nx), static_cast<long long>(p.nz), p.dx(), p.dz(),
                  r[0], r[1], p.dt(), p.cfl, static_cast<long long>(p.steps()), p.sim_time);
    ctx.out << text;
  }

  MemoryPlan memory(const RunContext& ctx) const override {
    const Params p = read_params(*ctx.config);
    const std::size_t elem = ctx.precision == Precision::fp32 ? 4 : 8;
    // state, state_tmp, fluxes (4 each), the gravity-wave source, halo buffers (< 1 field).
    const std::size_t one = grid::field_bytes(ctx.mpi, p.spec(), 1, elem);
    MemoryPlan m;
    m.add(ctx.device, 14 * one);
    // Output and checkpoints: host copies (double) of a field, and the frame
    // in flight to the background writer (4 fields in double).
    m.host_bytes += 2 * one * 8 / elem + 4 * one * 8 / elem;
    m.hint = "use fewer cells (euler2d.nx, nz) or more ranks";
    return m;
  }

  std::unique_ptr<Simulation> start(RunContext& ctx) const override {
    const Params p = read_params(*ctx.config);
    return grid::start_in_precision<Euler2dSimulation>(ctx, p);
  }

  std::vector<CheckResult> self_checks(RunContext& ctx) const override { return euler2d::self_checks(ctx); }
};

}  // namespace
}  // namespace strata::euler2d

using Euler2dModel = strata::euler2d::Euler2dModel;
STRATA_REGISTER_MODEL(Euler2dModel);
