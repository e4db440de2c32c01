// The `diffusion` model: the 3-D heat equation du/dt = kappa laplacian(u)
// on a box, explicit 7-point stencil, from a Gaussian whose exact spreading
// is known. It is the bandwidth benchmark of the stencil family: one read
// and one write of u per cell update.
#include <cmath>
#include <memory>
#include <string>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/grid_simulation.hpp"
#include "engine/runtime/format.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/step_count.hpp"
#include "models/diffusion/kernels.hpp"

namespace strata::diffusion {
namespace {

using grid::Boundary;
using grid::Field;
using grid::GridSpec;
using grid::index_t;
using kernels::stencil::Gaussian3;

struct Params {
  std::array<index_t, 3> n{64, 64, 64};
  std::array<double, 3> length{1, 1, 1};
  double kappa = 1e-2;
  double dt = 0;   // 0: 0.9 of the stability limit
  double sigma = 0.1;
  double amplitude = 1;
  Boundary boundary = Boundary::periodic;
  double sim_time = 0.25;
  double output_interval = 0.05;
  grid::Decomposition decomposition{{0, 0, 0}, "diffusion.decomposition", ""};

  std::array<double, 3> d() const {
    return {length[0] / static_cast<double>(n[0]), length[1] / static_cast<double>(n[1]),
            length[2] / static_cast<double>(n[2])};
  }
  // Explicit Euler with the 7-point Laplacian is stable for
  // kappa dt (1/dx^2 + 1/dy^2 + 1/dz^2) <= 1/2.
  double stable_dt() const {
    const auto h = d();
    return 0.5 / (kappa * (1 / (h[0] * h[0]) + 1 / (h[1] * h[1]) + 1 / (h[2] * h[2])));
  }
  double step_dt() const { return dt > 0 ? dt : 0.9 * stable_dt(); }

  GridSpec spec() const {
    GridSpec s;
    s.dims = 3;
    s.n = n;
    s.d = d();
    s.origin = {0, 0, 0};
    for (auto& b : s.boundary) b = {boundary, boundary};
    s.halo = 1;
    s.decomposition = decomposition;
    return s;
  }
  Gaussian3 gaussian() const {
    Gaussian3 g;
    g.amp = amplitude;
    g.s0 = sigma;
    g.kappa = kappa;
    for (int a = 0; a < 3; ++a) {
      g.centre[a] = 0.5 * length.at(a);
      g.length[a] = length.at(a);
      g.origin[a] = 0;
      g.images[a] = boundary == Boundary::periodic ? 1 : boundary == Boundary::wall ? 2 : 0;
    }
    return g;
  }
};

Boundary boundary_of(const std::string& s) {
  return s == "wall" ? Boundary::wall : s == "open" ? Boundary::open : Boundary::periodic;
}

Params read_params(const Config& c) {
  Params p;
  p.n = {c.integer("diffusion.nx"), c.integer("diffusion.ny"), c.integer("diffusion.nz")};
  p.length = {c.real("diffusion.lx"), c.real("diffusion.ly"), c.real("diffusion.lz")};
  p.kappa = c.real("diffusion.kappa");
  p.dt = c.real("diffusion.dt");
  p.sigma = c.real("diffusion.sigma");
  p.amplitude = c.real("diffusion.amplitude");
  p.boundary = boundary_of(c.string("diffusion.boundary"));
  p.sim_time = c.real("diffusion.sim_time");
  p.output_interval = c.real("diffusion.output_interval");
  p.decomposition = grid::read_decomposition(c, "diffusion.decomposition", 3);
  if (p.dt > p.stable_dt())
    c.fail("diffusion.dt", format("unstable: explicit diffusion needs kappa dt (1/dx^2 + 1/dy^2 + 1/dz^2) "
                                  "<= 1/2; the largest stable dt for this grid and kappa is %.6g s",
                                  p.stable_dt()));
  if (!step_count(p.sim_time, p.step_dt()))
    c.fail("diffusion.sim_time", step_count_problem(p.sim_time, p.step_dt(), p.dt > 0 ? "diffusion.dt" : "dt"));
  return p;
}

void declare_schema(Schema& s) {
  const Range cells{1.0, 1e6};
  s.integer("diffusion.nx", 64, "cells", cells, "cells along x");
  s.integer("diffusion.ny", 64, "cells", cells, "cells along y");
  s.integer("diffusion.nz", 64, "cells", cells, "cells along z");
  s.real("diffusion.lx", 1.0, "m", Range{0.0, {}, true}, "domain length along x (the box is [0, lx] x [0, ly] x [0, lz])");
  s.real("diffusion.ly", 1.0, "m", Range{0.0, {}, true}, "domain length along y");
  s.real("diffusion.lz", 1.0, "m", Range{0.0, {}, true}, "domain length along z");
  s.real("diffusion.kappa", 1e-2, "m2 s-1", Range{0.0, {}, true}, "diffusivity");
  s.real("diffusion.dt", 0.0, "s", Range{0.0, {}},
         "time step; 0 takes 0.9 of the stability limit 1 / (2 kappa (1/dx^2 + 1/dy^2 + 1/dz^2)). A larger dt is an "
         "input error that names the limit");
  s.real("diffusion.sigma", 0.1, "m", Range{0.0, {}, true},
         "standard deviation of the initial Gaussian, centred in the box");
  s.real("diffusion.amplitude", 1.0, "K", Range{}, "peak of the initial Gaussian");
  s.choice("diffusion.boundary", "periodic", {"periodic", "wall", "open"},
           "every side: periodic, wall (zero flux, insulated) or open (zero gradient)");
  s.real("diffusion.sim_time", 0.25, "s", Range{0.0, {}, true}, "model time to simulate").restart_safe = true;
  s.real("diffusion.output_interval", 0.05, "s", Range{0.0, {}},
         "model time between output frames (0: the first and last only)");
  grid::declare_decomposition(s, "diffusion.decomposition", 3);
}

template <class T>
class DiffusionSimulation final : public grid::GridSimulation<T> {
  using Base = grid::GridSimulation<T>;

 public:
  DiffusionSimulation(RunContext& ctx, const Params& p) : Base(ctx), p_(p) {
    auto g = std::make_unique<grid::Grid>(ctx.mpi, p.spec());
    u_ = Field<T>(*g, ctx.device, "u");
    next_ = Field<T>(*g, ctx.device, "u_next");
    halo_ = std::make_unique<grid::HaloExchange<T>>(*g, ctx.device, 1, &ctx.timers);
    const auto own = g->owned();
    factors_ = Buffer<double>(ctx.device, static_cast<std::size_t>(own.n[0] + own.n[1] + own.n[2]));
    const auto st = g->start();
    cells_ = kernels::stencil::CellCentres{{0, 0, 0}, {g->spec().d[0], g->spec().d[1], g->spec().d[2]},
                                           {st[0], st[1], st[2]}};
    grid::for_box(ctx.device, g->owned(), kernels::stencil::GaussianInit<T>{u_.view(), p.gaussian(), cells_});
    const auto h = g->spec().d;
    const double dt = p.step_dt();
    c_ = {static_cast<T>(p.kappa * dt / (h[0] * h[0])), static_cast<T>(p.kappa * dt / (h[1] * h[1])),
          static_cast<T>(p.kappa * dt / (h[2] * h[2]))};
    Base::begin(std::move(g), grid::GridClock{p.sim_time, dt, p.output_interval}, {{"u", "K", "temperature"}},
                {{"heat", "K m3", "integral of u over the domain"},
                 {"u_max", "K", "maximum of u"},
                 {"l2_error", "K",
                  "root mean square over the domain of u minus the analytic spreading Gaussian (the L2 norm "
                  "over the square root of the domain's volume)"}});
  }

 protected:
  void step(T dt) override {
    const grid::Grid& g = *this->grid_;
    const Device& dev = this->ctx_.device;
    // The last step may be shorter: scale the coefficients with it.
    const T scale = dt / static_cast<T>(this->clock().dt);
    const auto k = kernels::stencil::heat_step<T>(u_.view(), next_.view(), c_[0] * scale, c_[1] * scale, c_[2] * scale);
    const auto n = g.owned().n;
    const kernels::grid::index_t owned[3] = {n[0], n[1], n[2]};
    const bool wrapped[3] = {halo_->wrapped(0), halo_->wrapped(1), halo_->wrapped(2)};
    const auto launch = [&](const grid::Box& box) {
      if (box.size() > 0) parallel_for(dev, box.size(), kernels::stencil::periodic_heat_step(k, box, owned, wrapped));
    };
    // Overlap only where a message is waited for (Grid::interior_remote):
    // on one rank, or along a periodic axis one rank spans, the sweep
    // stays whole rows. Along such an axis the step reads across the seam
    // itself, and writes the halo rows of y the next step reads
    // (PeriodicHeatStep), so begin() copies those halos only before the
    // first step of this process (a start or a restart). The physical
    // halos come from owned cells, so they are filled before the interior;
    // the 7-point stencil reads face halos only, never an edge or corner,
    // so the edges that border a remote face (filled from a stale halo
    // here) need no second fill after end().
    halo_->begin({&u_}, !seams_current_);
    seams_current_ = true;
    grid::fill_boundaries(g, dev, u_);
    launch(g.interior_remote(1));
    halo_->end();
    for (const grid::Box& b : g.strips_remote(1)) launch(b);
    u_.swap(next_);
  }

  void restore(StateReader& r) override {
    Base::restore(r);
    seams_current_ = false;  // the restored fields' halos hold nothing yet
  }

  std::vector<Field<T>*> state() override { return {&u_}; }

  std::vector<double> diagnostics() override {
    const grid::Grid& g = *this->grid_;
    const Device& dev = this->ctx_.device;
    const auto h = g.spec().d;
    const double dv = h[0] * h[1] * h[2];
    const double heat = grid::global_sum(g, dev, kernels::grid::CellValue<T>{u_.view()}) * dv;
    const double umax = grid::global_max(g, dev, kernels::grid::CellValue<T>{u_.view()});
    // The exact solution from per-axis tables (GaussianAxisFactors): the
    // bits of evaluating it per cell, at a cost of n[0] + n[1] + n[2]
    // factors instead of n[0] n[1] n[2] (up to 9 exponentials each, twice:
    // global_sum's scale pass and its sum), which cost more than the steps.
    const kernels::stencil::Gaussian3 gauss = p_.gaussian();
    const double s2 = gauss.variance(this->time());
    const auto box = g.owned();
    const auto n = box.n;
    parallel_for(dev, n[0] + n[1] + n[2],
                 kernels::stencil::GaussianAxisFactors{gauss, cells_, s2, n[0], n[1], factors_.data()});
    const double* f = factors_.data();
    const double err2 = grid::global_sum(
        g, dev, kernels::stencil::GaussianError2Separable<T>{u_.view(), gauss.peak(s2), f, f + n[0], f + n[0] + n[1]});
    // Over the square root of the volume: the L2 norm's unit, K m^(3/2), has no UDUNITS
    // form, and the root mean square is the same number on a unit box.
    const double volume = dv * static_cast<double>(g.spec().n[0] * g.spec().n[1] * g.spec().n[2]);
    return {heat, umax, std::sqrt(err2 * dv / volume)};
  }

  double bytes_per_cell_update() const override { return 2.0 * sizeof(T); }

  void print_summary(const std::vector<double>& d) const override {
    this->ctx_.out << format("diffusion: t = %.6g s  heat = %.15g K m3  u_max = %.6g K  RMS error = %.3e K\n",
                             this->time(), d[0], d[1], d[2]);
  }

 private:
  Params p_;
  Field<T> u_, next_;
  Buffer<double> factors_;   // the exact solution's per-axis factors, for diagnostics()
  std::unique_ptr<grid::HaloExchange<T>> halo_;
  bool seams_current_ = false;  // the wrapped axes' halos of u hold the steps' copies
  kernels::stencil::CellCentres cells_{};
  std::array<T, 3> c_{};
};

class DiffusionModel final : public ModelOf<Params, read_params, declare_schema> {
 public:
  std::string_view name() const override { return "diffusion"; }
  std::string_view summary() const override {
    return "3-D heat equation, explicit 7-point stencil, from a Gaussian with a known exact solution (the "
           "bandwidth benchmark)";
  }
  std::vector<CheckResult> self_checks(RunContext& ctx) const override;

 protected:
  void plan(const RunContext& ctx, const Params& p) const override {
    const grid::Grid g(ctx.mpi, p.spec());
    const auto r = g.ranks();
    const double dt = p.step_dt();
    ctx.out << format("plan: %lld x %lld x %lld cells over %d x %d x %d ranks; dt = %.6g s (stability limit "
                      "%.6g s), %lld steps to t = %.6g s\n",
                      static_cast<long long>(p.n[0]), static_cast<long long>(p.n[1]),
                      static_cast<long long>(p.n[2]), r[0], r[1], r[2], dt, p.stable_dt(),
                      static_cast<long long>(step_count(p.sim_time, dt).value_or(0)), p.sim_time);
  }

  MemoryPlan memory(const RunContext& ctx, const Params& p) const override {
    const std::size_t elem = ctx.precision == Precision::fp32 ? 4 : 8;
    const std::size_t fields = grid::field_bytes(ctx.mpi, p.spec(), 3, elem);   // u, u_next, halo buffers (< 1 field)
    // Output and checkpoints: one field's host copy, and the frame in flight
    // to the background writer (u, in double).
    return MemoryPlan::of(ctx.device, fields, fields / 3 + fields / 3 * 8 / elem,
                          "use fewer cells (diffusion.nx, ny, nz) or more ranks");
  }

  std::unique_ptr<Simulation> start(RunContext& ctx, const Params& p) const override {
    return start_in_precision<DiffusionSimulation>(ctx, p);
  }
};

// The spreading Gaussian at three resolutions: the L2 error must fall as
// dx^2 (the explicit step's O(dt) error is O(dx^2) too, dt being a fixed
// fraction of the dx^2 stability limit), and the heat is conserved.
std::vector<CheckResult> DiffusionModel::self_checks(RunContext& ctx) const {
  std::vector<double> errors, heat0, heat1;
  const index_t sizes[3] = {24, 48, 96};
  for (index_t n : sizes) {
    Params p;
    p.n = {n, n, n};
    p.sim_time = 0.1;
    p.output_interval = 0;
    std::vector<double> first, last;
    grid::run_quietly<DiffusionSimulation>(
        ctx, p, [&](auto& sim, bool start) { (start ? first : last) = sim.last_diagnostics(); });
    errors.push_back(last[2]);
    heat0.push_back(first[0]);
    heat1.push_back(last[0]);
  }
  const bool fp32 = ctx.precision == Precision::fp32;
  std::vector<CheckResult> out;
  for (std::size_t i = 0; i < 2; ++i) {
    out.push_back(CheckResult::within(
        "diffusion Gaussian L2 order " + std::to_string(sizes[i]) + "^3 -> " + std::to_string(sizes[i + 1]) + "^3",
        std::log2(errors[i] / errors[i + 1]), 2.0, fp32 ? 0.3 : 0.1,
        format("L2 errors %.3e, %.3e; second-order scheme", errors[i], errors[i + 1])));
  }
  // Each step adds round-off of a few ulp per cell to the total.
  out.push_back(CheckResult::within("diffusion heat conserved (periodic, 96^3)", (heat1[2] - heat0[2]) / heat0[2], 0,
                                    fp32 ? 1e-4 : 1e-12, "relative change of the integral of u"));
  return out;
}

}  // namespace
}  // namespace strata::diffusion

using DiffusionModel = strata::diffusion::DiffusionModel;
STRATA_REGISTER_MODEL(DiffusionModel);
