// The `shallow_water` model: 2-D rotating shallow water on an f- or
// beta-plane, Arakawa C-grid, Sadourny's energy-conserving scheme
// (kernels/stencil/shallow_water.hpp), SSP-RK3 in time with a fixed dt
// from the CFL number of the initial state.
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/grid_simulation.hpp"
#include "engine/runtime/format.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/step_count.hpp"
#include "models/shallow_water/kernels.hpp"
#include "kernels/stencil/shallow_water.hpp"
#include "models/shallow_water/initial_state.hpp"
#include "models/shallow_water/params.hpp"
#include "models/shallow_water/stoker.hpp"

namespace strata::shallow_water {
namespace {

using grid::Field;
namespace ks = kernels::stencil;

template <class T>
class ShallowWaterSimulation final : public grid::GridSimulation<T> {
  using Base = grid::GridSimulation<T>;

 public:
  ShallowWaterSimulation(RunContext& ctx, const Params& p) : Base(ctx), p_(p) {
    auto g = std::make_unique<grid::Grid>(ctx.mpi, p.spec());
    const Device& dev = ctx.device;
    h_ = Field<T>(*g, dev, "h");
    u_ = Field<T>(*g, dev, "u");
    v_ = Field<T>(*g, dev, "v");
    for (int s = 0; s < 2; ++s) {
      const std::string tag = "_stage" + std::to_string(s + 1);
      stage_[s][0] = Field<T>(*g, dev, "h" + tag);
      stage_[s][1] = Field<T>(*g, dev, "u" + tag);
      stage_[s][2] = Field<T>(*g, dev, "v" + tag);
    }
    halo_ = std::make_unique<grid::HaloExchange<T>>(*g, dev, 3, &ctx.timers);
    const InitialState init(p);   // a signal in set_owned stops the run in initial_dt
    grid::set_owned(*g, h_, [&](index_t I, index_t J) { return init.h(I, J); });
    grid::set_owned(*g, u_, [&](index_t I, index_t J) { return init.u(I, J); });
    grid::set_owned(*g, v_, [&](index_t I, index_t J) { return init.v(I, J); });
    const double dt = initial_dt(p, init, *g);
    coriolis_ = ks::CoriolisRows{p.f0, p.beta, -0.5 * p.ly, p.dy(), g->start()[1]};
    check_every_ = ctx.config != nullptr ? ctx.config->integer("health.every_steps") : 0;
    Base::begin(std::move(g), grid::GridClock{p.sim_time, dt, p.output_interval, "shallow_water.sim_time"},
                {{"h", "m", "fluid depth"},
                 {"u", "m s-1", "x velocity on the west face of the cell (C-grid: x = i dx)"},
                 {"v", "m s-1", "y velocity on the south face of the cell (C-grid: y = j dy)"},
                 {"vorticity", "s-1", "relative vorticity dv/dx - du/dy, mean of the cell's four corners"}},
                {{"mass", "m3", "volume of fluid: sum of h dx dy"},
                 {"energy", "m5 s-2", "total energy per unit density: sum of (h (u^2 + v^2)/2 + g h^2/2) dx dy"},
                 {"potential_enstrophy", "m s-2", "sum of h q^2/2 dx dy, q = (f + vorticity)/h at the corners"},
                 {"max_courant", "1", "largest Courant number of a cell (stability limit sqrt(3)/2)"}},
                {"shallow_water/initial_mass", "shallow_water/initial_energy"});
  }

  Performance finish() override {
    if (failure_) this->unstable(*failure_);
    return Base::finish();
  }

  // For the self-checks: this rank's owned depths, and its grid.
  std::vector<double> depth() const { return grid::owned_values(*this->grid_, this->ctx_.device, h_); }
  const grid::Grid& grid() const { return *this->grid_; }

 protected:
  void step(T dt) override {
    if (failure_) this->unstable(*failure_);
    Field<T>* s[3] = {&h_, &u_, &v_};
    Field<T>* a[3] = {&stage_[0][0], &stage_[0][1], &stage_[0][2]};
    Field<T>* b[3] = {&stage_[1][0], &stage_[1][1], &stage_[1][2]};
    // SSP-RK3 (Shu & Osher 1988): A = s + dt L(s); B = 3/4 s + 1/4 (A + dt L(A));
    // s <- 1/3 s + 2/3 (B + dt L(B)).
    const bool check = check_every_ > 0 && this->steps_done() > 0 && this->steps_done() % check_every_ == 0;
    stage(s, s, a, T(1), dt, check);
    stage(a, s, b, T(0.25), dt, false);
    stage(b, s, s, T(2) / T(3), dt, false);
  }

  std::vector<Field<T>*> state() override { return {&h_, &u_, &v_}; }

  void restore(StateReader& r) override {
    Base::restore(r);
    seams_current_ = false;  // the restored fields' halos hold nothing yet
  }

  std::vector<const Field<T>*> frame_fields() override {
    refresh(h_, u_, v_);
    Field<T>& vorticity = stage_[0][0];  // scratch between steps
    grid::for_box(this->ctx_.device, this->grid_->owned(), ks::VorticityAtCentres<T>{rhs(h_, u_, v_), vorticity.view()});
    return {&h_, &u_, &v_, &vorticity};
  }

  std::vector<double> diagnostics() override {
    const grid::Grid& g = *this->grid_;
    const Device& dev = this->ctx_.device;
    refresh(h_, u_, v_);
    const double area = p_.dx() * p_.dy();
    const ks::ShallowWaterRhs<T> r = rhs(h_, u_, v_);
    const double mass = grid::global_sum(g, dev, kernels::grid::CellValue<T>{h_.view()}) * area;
    const double energy = grid::global_sum(g, dev, ks::EnergyOf<T>{r}) * area;
    const double enstrophy = grid::global_sum(g, dev, ks::EnstrophyOf<T>{r}) * area;
    const double courant = max_courant();
    if (!(courant <= kCourantLimit)) failure_ = courant_failure(courant);
    return {mass, energy, enstrophy, courant};
  }

  // The least a step must move per cell: each SSP-RK3 stage reads its input
  // (h, u, v) and the step's start state (the same fields in stage 1) and
  // writes its output, (3 + 3) + (3 + 3 + 3) + (3 + 3 + 3) = 24 values.
  double bytes_per_cell_update() const override { return 24.0 * sizeof(T); }

  void print_summary(const std::vector<double>& d) const override {
    const std::vector<double>& d0 = this->initial_diagnostics();
    this->ctx_.out << format("shallow_water: t = %.6g s  mass %.15g m3 (relative change %.2e)  energy %.9g m5 s-2 "
                             "(relative change %.2e)  max_courant %.4f (limit %.4f = sqrt(3)/2)\n",
                             this->time(), d[0], (d[0] - d0[0]) / d0[0], d[1], (d[1] - d0[1]) / d0[1], d[3],
                             kCourantLimit);
  }

 private:
  ks::ShallowWaterRhs<T> rhs(const Field<T>& h, const Field<T>& u, const Field<T>& v) const {
    return {h.view(),
            u.view(),
            v.view(),
            static_cast<T>(p_.g),
            static_cast<T>(1 / p_.dx()),
            static_cast<T>(1 / p_.dy()),
            static_cast<T>(p_.viscosity),
            coriolis_};
  }

  // Physical-boundary halos, x sides first, then y over the whole x extent
  // (so corners come out right): h and the tangential velocity are even
  // about a wall, the normal velocity odd and 0 on it; one launch per axis
  // (ShallowWaterWalls), or per side where a side would read the other's
  // halo (one owned cell).
  void fill_walls(Field<T>& h, Field<T>& u, Field<T>& v) {
    const grid::Grid& g = *this->grid_;
    const Device& dev = this->ctx_.device;
    const auto n = g.count();
    for (int axis = 0; axis < 2; ++axis) {
      ks::ShallowWaterWalls<T> walls{h.view(), u.view(), v.view(), axis, n[axis], {0, 0}};
      kernels::grid::BoxList slabs;
      for (int side = 0; side < 2; ++side) {
        if (!g.physical(axis, side)) continue;
        grid::Box box = g.stored();   // the halo beyond the side, over the other axis' halos
        box.lo[axis] = side == 0 ? -g.halo(axis) : n[axis];
        box.n[axis] = g.halo(axis);
        if (slabs.count == 1 && n[axis] <= g.halo(axis)) {
          grid::for_boxes(dev, slabs, walls);
          slabs = {};
        }
        walls.side[slabs.count] = side;
        slabs.add(box);
      }
      grid::for_boxes(dev, slabs, walls);
    }
  }

  void refresh(Field<T>& h, Field<T>& u, Field<T>& v) {
    halo_->exchange({&h, &u, &v});
    fill_walls(h, u, v);
  }

  // out = s0 + b ((in - s0) + dt L(in)), overlapped only where a message is
  // waited for (Grid::interior_remote): on one rank the halos are the
  // wrapped copies and the walls' images of owned cells, so a stage is one
  // launch over the whole box. Along a periodic axis this rank spans alone
  // the stage writes its output's halo copies itself (wrap_cell), and every
  // stage's input is an earlier stage's output, so begin() wraps only
  // before this process's first stage (a start or a restart). The stencil
  // reads edge and corner halos (h at the corners), so with messages the
  // walls are filled again after end(), over the halos that came in,
  // before the strips.
  void stage(Field<T>* const in[3], Field<T>* const s0[3], Field<T>* const out[3], T b, T dt, bool check) {
    const grid::Grid& g = *this->grid_;
    const Device& dev = this->ctx_.device;
    ks::ShallowWaterStage<T> k{rhs(*in[0], *in[1], *in[2]),
                               s0[0]->view(),
                               s0[1]->view(),
                               s0[2]->view(),
                               out[0]->view(),
                               out[1]->view(),
                               out[2]->view(),
                               b,
                               dt,
                               g.physical(0, 0),
                               g.physical(1, 0)};
    for (int a = 0; a < 2; ++a) k.wrap[a] = halo_->wrapped(a) ? g.count()[a] : 0;
    // Each box a launch of the stage that carries a column's shared values
    // from row to row on CUDA (ShallowWaterColumns).
    const auto launch = [&](const grid::Box& box) {
      if (box.size() > 0) parallel_for(dev, box.size(), ShallowWaterColumns<T>{k, box});
    };
    halo_->begin({in[0], in[1], in[2]}, !seams_current_);
    seams_current_ = true;
    fill_walls(*in[0], *in[1], *in[2]);
    launch(g.interior_remote(1));
    halo_->end();
    if (g.exchanges()) fill_walls(*in[0], *in[1], *in[2]);
    if (check) {
      // The health check's cadence (health.every_steps): the state's halos
      // are current here, at the start of a step.
      const double courant = max_courant();
      if (!(courant <= kCourantLimit)) this->unstable(courant_failure(courant));
    }
    for (const grid::Box& box : g.strips_remote(1)) launch(box);
  }

  double max_courant() const {
    return grid::global_max(
        *this->grid_, this->ctx_.device,
        ks::CourantOf<T>{h_.view(), u_.view(), v_.view(), courant_coefficients(p_, this->clock().dt)});
  }

  static std::string courant_failure(double courant) {
    return format("max_courant = %.4g exceeds sqrt(3)/2 = 0.866, the stability limit of SSP-RK3 on this scheme "
                  "(the flow sped up after dt was fixed, or the depth went negative; lower shallow_water.cfl)",
                  courant);
  }

  Params p_;
  Field<T> h_, u_, v_;
  Field<T> stage_[2][3];
  std::unique_ptr<grid::HaloExchange<T>> halo_;
  ks::CoriolisRows coriolis_{};
  std::int64_t check_every_ = 0;
  std::optional<std::string> failure_;
  bool seams_current_ = false;  // the wrapped axes' halos of the state hold its stages' copies
};

class ShallowWaterModel final : public ModelOf<Params, read_params, declare_schema> {
 public:
  std::string_view name() const override { return "shallow_water"; }
  std::string_view summary() const override {
    return "2-D rotating shallow water on an f- or beta-plane: C-grid, Sadourny's energy-conserving scheme, "
           "SSP-RK3; gravity waves, Stoker's dam break, a balanced jet, a vortex, barotropic instability";
  }
  std::vector<CheckResult> self_checks(RunContext& ctx) const override;

 protected:
  // O(1) in the grid's size: dt from a sample of the initial state
  // (sampled_dt: every cell of a grid up to 256 x 256, so then exact; a
  // larger grid's dt is at most this, the run scans every cell).
  void plan(const RunContext& ctx, const Params& p) const override {
    const grid::Grid g(ctx.mpi, p.spec());
    const InitialState init(p);
    index_t sampled = 0;
    const double dt = sampled_dt(p, init, &sampled);
    const bool exact = sampled == p.nx * p.ny;
    const auto r = g.ranks();
    ctx.out << format(
        "plan: %s, %lld x %lld cells (dx = %.6g m, dy = %.6g m) over %d x %d ranks; dt %s %.6g s (cfl %.3g%s), "
        "%s%lld steps of SSP-RK3 to t = %.6g s\n",
        to_string(p.initial), static_cast<long long>(p.nx), static_cast<long long>(p.ny), p.dx(), p.dy(), r[0], r[1],
        exact ? "=" : "<=", dt, p.cfl,
        exact ? "" : (", from " + std::to_string(sampled) + " sampled cells; the run scans them all").c_str(),
        exact ? "" : "at least ", static_cast<long long>(step_count(p.sim_time, dt).value_or(0)), p.sim_time);
    const double c = std::sqrt(p.g * p.H);
    if (p.f0 != 0)
      ctx.out << format("      gravity-wave speed sqrt(g H) = %.6g m s-1, Rossby radius %.6g m\n", c,
                        c / std::fabs(p.f0));
  }

  MemoryPlan memory(const RunContext& ctx, const Params& p) const override {
    const std::size_t elem = ctx.precision == Precision::fp32 ? 4 : 8;
    // h, u, v and two RK stages of them; the halo buffers are less than one more.
    const std::size_t fields = grid::field_bytes(ctx.mpi, p.spec(), 10, elem);
    // Output and checkpoints: a host copy of a field, and it in double; the
    // frame in flight to the background writer (h, u, v, vorticity in double).
    return MemoryPlan::of(ctx.device, fields, fields / 10 * 3 + fields / 10 * 4 * 8 / elem,
                          "use fewer cells (shallow_water.nx, ny) or more ranks");
  }

  std::unique_ptr<Simulation> start(RunContext& ctx, const Params& p) const override {
    return start_in_precision<ShallowWaterSimulation>(ctx, p);
  }
};

// Runs p to the end without output; returns the first and last diagnostics
// rows and this rank's owned h at the start and the end.
struct Outcome {
  std::vector<double> first, last, h0, h1;
  grid::IntVect start, count;
};

Outcome run_case(RunContext& ctx, const Params& p) {
  Outcome o;
  grid::run_quietly<ShallowWaterSimulation>(ctx, p, [&](auto& sim, bool start) {
    (start ? o.first : o.last) = sim.last_diagnostics();
    (start ? o.h0 : o.h1) = sim.depth();
    o.start = sim.grid().start();
    o.count = sim.grid().count();
  });
  return o;
}

std::vector<CheckResult> ShallowWaterModel::self_checks(RunContext& ctx) const {
  const bool fp32 = ctx.precision == Precision::fp32;
  const auto verdict = &CheckResult::within;
  std::vector<CheckResult> out;

  // A vortex on a beta-plane between walls, 1000 steps: mass to round-off;
  // energy to the time stepping's error, measured on the available energy
  // (total minus that of the resting layer of the same mass, g M^2 / (2 A)),
  // the part the flow can change: SSP-RK3 damps a mode of frequency w by
  // (w dt)^4 / 24 a step.
  {
    Params p;
    p.nx = p.ny = 32;
    p.initial = Initial::vortex;
    p.beta = 2e-11;
    p.boundary_y = Boundary::wall;
    p.output_interval = 0;
    const double dt = initial_dt(p, InitialState(p), grid::Grid(ctx.mpi, p.spec()));
    p.sim_time = 1000 * dt;
    const Outcome o = run_case(ctx, p);
    const double area = p.lx * p.ly;
    const double rest = 0.5 * p.g * o.first[0] * o.first[0] / area;
    out.push_back(verdict("mass, vortex, 1000 steps", (o.last[0] - o.first[0]) / o.first[0], 0, fp32 ? 1e-6 : 1e-13,
                          "relative change; the fluxes telescope, only the rounding of cell updates is left"));
    out.push_back(verdict("available energy, vortex, 1000 steps", (o.last[1] - o.first[1]) / (o.first[1] - rest), 0,
                          1e-4, "relative change; SSP-RK3 damps it by (w dt)^4/24 a step, w ~ f0: ~2e-5 here, 5x"));
  }
  // The discretely balanced jet, 1000 steps: h must not move.
  {
    Params p;
    p.nx = p.ny = 32;
    p.initial = Initial::zonal_jet;
    p.boundary_y = Boundary::wall;
    p.output_interval = 0;
    const double dt = initial_dt(p, InitialState(p), grid::Grid(ctx.mpi, p.spec()));
    p.sim_time = 1000 * dt;
    const Outcome o = run_case(ctx, p);
    double d2 = 0, n2 = 0;
    for (std::size_t c = 0; c < o.h0.size(); ++c) {
      d2 += (o.h1[c] - o.h0[c]) * (o.h1[c] - o.h0[c]);
      n2 += o.h0[c] * o.h0[c];
    }
    out.push_back(verdict("zonal jet steady, 1000 steps", std::sqrt(ctx.mpi.sum(d2) / ctx.mpi.sum(n2)), 0,
                          fp32 ? 1e-5 : 1e-10, "relative L2 change of h; the tendency is 0 up to round-off"));
  }
  // Stoker's dam break along x (ny = 1), 400 cells, viscosity 0.5 c_l dx:
  // L1 error of h relative to (h_l - h_r) lx. First order at the bore and
  // the smeared rarefaction corners: 0.0064 measured, 0.0036 at 800 cells.
  {
    Params p;
    p.nx = 400;
    p.ny = 1;
    p.lx = 1000;
    p.ly = 2.5;
    p.f0 = 0;
    p.initial = Initial::dam_break;
    p.boundary_x = Boundary::wall;
    p.dam_h_left = 2;
    p.dam_h_right = 1;
    p.viscosity = 0.5 * std::sqrt(p.g * p.dam_h_left) * p.dx();
    p.sim_time = 50;  // the bore (5.6 m/s) and the rarefaction (4.4 m/s) stay 200 m from the walls
    p.output_interval = 0;
    const Outcome o = run_case(ctx, p);
    const Stoker exact(p.g, p.dam_h_left, p.dam_h_right, p.centre_x * p.lx);
    double l1 = 0;
    for (index_t i = 0; i < o.count[0]; ++i) {
      const double x = (static_cast<double>(o.start[0] + i) + 0.5) * p.dx();
      l1 += std::fabs(o.h1[static_cast<std::size_t>(i)] - exact.h(x, p.sim_time)) * p.dx();
    }
    l1 = ctx.mpi.sum(l1) / ((p.dam_h_left - p.dam_h_right) * p.lx);
    out.push_back(verdict("dam break vs Stoker, L1", l1, 0, 0.01,
                          "relative L1 error of h, 400 cells; O(dx) at the bore, 1.5x the measured 0.0064"));
  }
  return out;
}

}  // namespace
}  // namespace strata::shallow_water

using ShallowWaterModel = strata::shallow_water::ShallowWaterModel;
STRATA_REGISTER_MODEL(ShallowWaterModel);
