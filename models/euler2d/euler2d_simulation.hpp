// The euler2d run: miniWeather's three-stage Runge-Kutta with alternating
// dimensional splitting over the distributed grid, its output and
// diagnostics. The numerics are in kernels/stencil/euler2d.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/grid/grid.hpp"
#include "engine/grid/grid_simulation.hpp"
#include "engine/runtime/format.hpp"
#include "engine/runtime/stop_request.hpp"
#include "models/euler2d/kernels.hpp"
#include "models/euler2d/initial_state.hpp"
#include "models/euler2d/params.hpp"

namespace strata::euler2d {

template <class T>
class Euler2dSimulation final : public grid::GridSimulation<T> {
  using Base = grid::GridSimulation<T>;

 public:
  Euler2dSimulation(RunContext& ctx, const Params& p) : Base(ctx), p_(p), prof_(profiles(p)) {
    auto g = std::make_unique<grid::Grid>(ctx.mpi, p.spec());
    const std::vector<std::string> names = {"dens", "umom", "wmom", "rhot"};
    std::vector<std::string> tmp, tmp2;
    for (const std::string& v : names) {
      tmp.push_back(v + "_tmp");
      tmp2.push_back(v + "_tmp2");
    }
    q_ = Field<T>(*g, ctx.device, names);
    tmp_ = Field<T>(*g, ctx.device, tmp);
    tmp2_ = Field<T>(*g, ctx.device, tmp2);
    halo_ = std::make_unique<grid::HaloExchange<T>>(*g, ctx.device, k::kVars, &ctx.timers);
    // The x sweep reads across a periodic x this rank spans alone, but for
    // the jet's inflow, which overrides the left halo, and for a rank of
    // fewer columns than the stencil reaches beyond them.
    seam_x_ = halo_->wrapped(0) && p.c != Case::injection && g->count()[0] >= k::kHalo;
    upload_background(*g);
    initial_state(*g);
    if (p.c == Case::gravity_waves) gravity_wave_forcing(*g);
    plan_boundaries(*g);
    Base::begin(std::move(g), grid::GridClock{p.sim_time, p.dt(), p.output_interval},
                {{"dens", "kg m-3", "density perturbation rho' from the hydrostatic background"},
                 {"uwnd", "m s-1", "x wind u"},
                 {"wwnd", "m s-1", "z (vertical) wind w"},
                 {"theta", "K", "potential temperature perturbation theta' from the hydrostatic background"}},
                {{"mass", "kg m-1", "domain integral of rho (per metre along y)"},
                 {"total_energy", "J m-1",
                  "domain integral of rho (u^2 + w^2) + rho cv T, as miniWeather defines it (no 1/2 on the kinetic "
                  "term)"},
                 {"d_mass", "1", "relative change of mass since t = 0, miniWeather's d_mass"},
                 {"d_te", "1", "relative change of total_energy since t = 0, miniWeather's d_te"},
                 {"max_cfl", "1", "largest Courant number dt max((|u| + c) / dx, (|w| + c) / dz), c the speed of sound"}},
                {"euler2d/mass0", "euler2d/te0"});
  }

  // Largest |value| of a primitive over the owned cells: 0 rho', 1 u, 2 w, 3 theta'.
  double max_abs_primitive(int which) {
    double m = 0;
    const std::vector<double> values = std::move(primitives().at(which));   // a range-for would not keep the temporary
    for (double f : values) m = std::max(m, std::fabs(f));
    return this->ctx_.mpi.max(m);
  }

 protected:
  // One step: three Runge-Kutta stages in x then three in z, or z then x
  // on odd steps (miniWeather's alternating splitting; the step count, not
  // a stored switch, tells which, so a restart continues the alternation).
  void step(T dt) override {
    const bool x_first = this->steps_done() % 2 == 0;
    sweep(x_first ? 0 : 1, dt);
    sweep(x_first ? 1 : 0, dt);
  }

  std::vector<Field<T>*> state() override { return {&q_}; }

  // The frames hold the primitives (density perturbation, u, w, theta
  // perturbation) of the conserved state.
  typename grid::GridSimulation<T>::FrameTransform frame_transform() const override {
    const auto n = this->grid_->count();
    std::vector<double> hr, hrt;   // the hydrostatic density and density x theta of each local row
    for (index_t j = 0; j < n[1]; ++j) {
      const std::size_t kc = static_cast<std::size_t>(start_z_ + j + k::kHalo);
      hr.push_back(prof_.dens_cell[kc]);
      hrt.push_back(prof_.dens_theta_cell[kc]);
    }
    return [nx = static_cast<std::size_t>(n[0]), hr = std::move(hr), hrt = std::move(hrt)](auto& q) {
      for (std::size_t c = 0; c < q[0].size(); ++c) {
        const std::size_t j = c / nx;
        const double rho = hr[j] + q[0][c];
        q[1][c] = q[1][c] / rho;
        q[2][c] = q[2][c] / rho;
        q[3][c] = (q[3][c] + hrt[j]) / rho - hrt[j] / hr[j];
      }
    };
  }

  std::vector<double> diagnostics() override {
    const double m = mass(), e = energy();
    // The totals at t = 0, what d_mass and d_te compare with: this row's own at first.
    const std::vector<double>& first = this->initial_diagnostics();
    const double mass0 = first.empty() ? m : first[0], te0 = first.empty() ? e : first[1];
    const double cfl = grid::global_max(*this->grid_, this->ctx_.device,
                                        k::CellCourant<T>{totals(), this->clock().dt});
    if (this->checking() && cfl > p_.cfl * (1 + 1e-9))
      this->unstable(format("CFL: the fastest wave (|wind| + speed of sound) reached a Courant number of "
                            "%.4g, above euler2d.cfl = %.4g, so it is faster than the 450 m/s the time step "
                            "assumes",
                            cfl, p_.cfl));
    return {m, e, (m - mass0) / mass0, (e - te0) / te0, cfl};
  }

  // The least a step must move per cell: each of the 3 Runge-Kutta stages
  // of both directional sweeps reads its input (4 variables) and the step's
  // start state (the same fields in stage 1) and writes its output; the
  // fluxes need not leave the cache (nor do they: SweepStage):
  // 2 x ((4 + 4) + (4 + 4 + 4) + (4 + 4 + 4)) = 64 values.
  double bytes_per_cell_update() const override { return 64.0 * sizeof(T); }

  // miniWeather prints "d_mass: %le" and "d_te:   %le"; the same lines here
  // can be put next to its output.
  void print_summary(const std::vector<double>& d) const override {
    this->ctx_.out << format(
        "euler2d %s: %lld x %lld cells, t = %.6g s (dt = %.6g s), mass = %.15e kg/m, total energy = %.15e "
        "J/m, max CFL = %.4g (limit %.4g = euler2d.cfl: above it the run stops)\nd_mass: %le\nd_te:   %le\n",
        p_.case_name().c_str(), static_cast<long long>(p_.nx), static_cast<long long>(p_.nz), this->time(),
        this->clock().dt, d[0], d[1], d[4], p_.cfl, d[2], d[3]);
  }

 private:
  // Three stages along one axis: q* = q + dt/3 rhs(q), q** = q + dt/2
  // rhs(q*), q = q + dt rhs(q**). A stage's output is never its forcing
  // state (a cell's faces read its neighbours'), so q** has a buffer of
  // its own.
  void sweep(int axis, T dt) {
    stage(axis, q_, q_, tmp_, dt / 3);
    stage(axis, q_, tmp_, tmp2_, dt / 2);
    stage(axis, q_, tmp2_, q_, dt / 1);
  }

  // out = init + dt rhs(forcing) along `axis`, one fused kernel
  // (SweepStage). Where no halo along the axis comes from another rank
  // (one rank, or a sweep along an axis not cut), the halos are ready once
  // begin() has wrapped them and the boundaries are set: one launch over
  // the box. Otherwise the cells two or more from a remote face go while
  // the messages travel, the rest after them. The wall rows (z) mirror
  // owned rows, so they are set before any cell beside them goes; the
  // jet's inflow (x) overrides the halo the exchange brings, so it comes
  // after that halo. A sweep reads along its own axis only, and the
  // periodic axis a rank may span alone is x: a z sweep needs no copies of
  // the x halos (a launch of a few thousand threads a stage), and an x
  // sweep that reads across the seam itself (seam_x_) none either: the x
  // halos of a rank that spans x alone are then never copied.
  void stage(int axis, Field<T>& init, Field<T>& forcing, Field<T>& out, T dt) {
    const grid::Grid& g = *this->grid_;
    const T hv = static_cast<T>(-p_.hv_beta * g.spec().d.at(axis) / (16 * static_cast<double>(dt)));
    halo_->begin({&forcing}, axis == 0 && !seam_x_);
    if (axis == 1) walls(forcing);
    if (!g.remote(axis, 0) && !g.remote(axis, 1)) {
      if (axis == 0) inflow(forcing);
      fused(axis, init, forcing, out, hv, dt, g.owned());
      halo_->end();
      return;
    }
    fused(axis, init, forcing, out, hv, dt, cells_inner_[axis]);
    halo_->end();
    if (axis == 0) inflow(forcing);
    for (const Box& b : cells_outer_[axis]) fused(axis, init, forcing, out, hv, dt, b);
  }

  // The halo rows beyond the solid bottom and top (z), one launch.
  void walls(Field<T>& forcing) {
    grid::for_boxes(this->ctx_.device, walls_,
                    k::WallRowsZ<T>{forcing.view(), background(), {wall_src_[0], wall_src_[1]}});
  }

  // The jet's inflow rows of the left halo (x).
  void inflow(Field<T>& forcing) {
    if (p_.c == Case::injection && inject_.size() > 0)
      grid::for_box(this->ctx_.device, inject_, k::InjectJet<T>{forcing.view(), background()});
  }

  void fused(int axis, Field<T>& init, Field<T>& forcing, Field<T>& out, T hv, T dt, const Box& cells) {
    if (cells.size() <= 0) return;
    const Device& dev = this->ctx_.device;
    const k::ApplyTendency<T> apply{init.view(), forcing.view(), {}, out.view(), wforce_view(), axis,
                                    static_cast<T>(this->grid_->spec().d.at(axis)), dt};
    if (axis == 0) {
      const index_t seam = seam_x_ ? this->grid_->count()[0] : 0;
      parallel_for(dev, cells.size(), SweepStage<T, 0>{{{forcing.view(), {}, background(), hv}, apply}, cells, seam});
    } else {
      parallel_for(dev, cells.size(), SweepStage<T, 1>{{{forcing.view(), {}, background(), hv}, apply}, cells});
    }
  }

  grid::FieldView<const T> wforce_view() const {
    if (p_.c != Case::gravity_waves) return {};
    return wforce_.view();
  }

  k::Background<T> background() const {
    k::Background<T> b;
    const T* base = bg_.data();
    const std::size_t cells = static_cast<std::size_t>(p_.nz + 2 * k::kHalo), faces = static_cast<std::size_t>(p_.nz + 1);
    b.dens_cell = base;
    b.dens_theta_cell = base + cells;
    b.dens_int = base + 2 * cells;
    b.dens_theta_int = base + 2 * cells + faces;
    b.pressure_int = base + 2 * cells + 2 * faces;
    b.k0 = start_z_;
    b.nz = p_.nz;
    return b;
  }

  k::CellTotals<T> totals() const {
    return {q_.view(), background(), this->grid_->spec().d[0], this->grid_->spec().d[1]};
  }
  double mass() { return grid::global_sum(*this->grid_, this->ctx_.device, k::CellMass<T>{totals()}); }
  double energy() { return grid::global_sum(*this->grid_, this->ctx_.device, k::CellEnergy<T>{totals()}); }

  // The background as T on the device (what the kernels use) and, for
  // output, the same values back in double.
  void upload_background(const grid::Grid& g) {
    start_z_ = g.start()[1];
    std::vector<T> all;
    for (const auto* v : {&prof_.dens_cell, &prof_.dens_theta_cell, &prof_.dens_int, &prof_.dens_theta_int,
                          &prof_.pressure_int})
      for (double x : *v) all.push_back(static_cast<T>(x));
    bg_ = Buffer<T>(this->ctx_.device, all.size());
    bg_.copy_from_host(all.data(), all.size());
    for (auto* v : {&prof_.dens_cell, &prof_.dens_theta_cell})
      for (double& x : *v) x = static_cast<double>(static_cast<T>(x));
  }

  // Cell averages by 3 x 3 Gauss-Legendre quadrature of the case's
  // perturbation, as miniWeather initialises them.
  void initial_state(const grid::Grid& g) {
    std::vector<T> host(static_cast<std::size_t>(g.storage()) * k::kVars, T(0));
    const grid::FieldView<T> q_at = grid::host_view(g, host, k::kVars);
    const auto n = g.count(), s0 = g.start();
    const double dx = p_.dx(), dz = p_.dz();
    // O(cells) quadrature: a signal ends it early (GridSimulation::begin stops the run).
    for (index_t j = 0; j < n[1] && stop_signal() == 0; ++j)
      for (index_t i = 0; i < n[0]; ++i) {
        double q[k::kVars] = {0, 0, 0, 0};
        for (int kk = 0; kk < 3; ++kk)
          for (int ii = 0; ii < 3; ++ii) {
            const double x = (static_cast<double>(s0[0] + i) + 0.5) * dx + (kQPoints[ii] - 0.5) * dx;
            const double z = (static_cast<double>(s0[1] + j) + 0.5) * dz + (kQPoints[kk] - 0.5) * dz;
            const Point s = sample(p_.c, x, z);
            q[k::kDens] = q[k::kDens] + s.r * kQWeights[ii] * kQWeights[kk];
            q[k::kUmom] = q[k::kUmom] + (s.r + s.hr) * s.u * kQWeights[ii] * kQWeights[kk];
            q[k::kWmom] = q[k::kWmom] + (s.r + s.hr) * s.w * kQWeights[ii] * kQWeights[kk];
            q[k::kRhot] = q[k::kRhot] + ((s.r + s.hr) * (s.t + s.ht) - s.hr * s.ht) * kQWeights[ii] * kQWeights[kk];
          }
        for (int v = 0; v < k::kVars; ++v) q_at(i, j, 0, v) = static_cast<T>(q[v]);
      }
    q_.buffer().copy_from_host(host.data(), host.size());
    tmp_.buffer().copy_from_host(host.data(), host.size());
    tmp2_.buffer().copy_from_host(host.data(), host.size());
  }

  // gravity_waves: a w-momentum source 0.01 cos^2 (within 500 m of (xlen/8,
  // 1000 m)) times the background density. miniWeather's serial code adds it
  // inside its loop over the four variables, before the w update, so it
  // counts three times per stage; ApplyTendency adds it three times too.
  void gravity_wave_forcing(const grid::Grid& g) {
    wforce_ = Field<T>(g, this->ctx_.device, "wforce");
    grid::set_owned(g, wforce_, [&](index_t I, index_t J) {
      const double x = (static_cast<double>(I) + 0.5) * p_.dx(), z = (static_cast<double>(J) + 0.5) * p_.dz();
      return ellipse_cosine(x, z, 0.01, k::kXLen / 8, 1000., 500., 500.) * prof_.dens_cell.at(J + k::kHalo);
    });
  }

  // The cells of each sweep two or more from a face whose halo comes
  // from another rank (the 4-point faces of a cell read two cells either
  // side), and the rest; the wall halos; the injection rows.
  void plan_boundaries(const grid::Grid& g) {
    const auto n = g.count();
    for (int a = 0; a < 2; ++a) {
      const index_t low = g.remote(a, 0) ? 2 : 0, high = g.remote(a, 1) ? 2 : 0;
      Box inner = g.owned(), below = g.owned(), above = g.owned();
      inner.lo[a] = std::min(low, n[a]);
      inner.n[a] = std::max<index_t>(0, n[a] - low - high);
      below.n[a] = inner.lo[a];
      above.lo[a] = inner.lo[a] + inner.n[a];
      above.n[a] = n[a] - above.lo[a];
      cells_inner_[a] = inner;
      cells_outer_[a].clear();
      for (const Box& b : {below, above})
        if (b.size() > 0) cells_outer_[a].push_back(b);
    }
    for (int side = 0; side < 2; ++side) {
      if (!g.physical(1, side)) continue;
      Box b = g.owned();
      b.lo[1] = side == 0 ? -k::kHalo : n[1];
      b.n[1] = k::kHalo;
      wall_src_[walls_.count] = side == 0 ? 0 : n[1] - 1;
      walls_.add(b);
    }
    // The jet enters through the left halo of the ranks at the domain's left edge.
    inject_ = Box{};
    inject_.n[0] = 0;
    if (p_.c == Case::injection && g.start()[0] == 0) {
      index_t lo = -1, hi = -1;
      for (index_t j = 0; j < n[1]; ++j) {
        const double z = (static_cast<double>(g.start()[1] + j) + 0.5) * p_.dz();
        if (std::fabs(z - 3 * k::kZLen / 4) <= k::kZLen / 16) {
          if (lo < 0) lo = j;
          hi = j;
        }
      }
      if (lo >= 0) {
        inject_.lo[0] = -k::kHalo;
        inject_.n[0] = k::kHalo;
        inject_.lo[1] = lo;
        inject_.n[1] = hi - lo + 1;
      }
    }
  }

  // This rank's owned rho', u, w and theta', as miniWeather's output writes them.
  std::vector<std::vector<double>> primitives() {
    std::vector<std::vector<double>> q;
    for (int v = 0; v < k::kVars; ++v) q.push_back(grid::owned_values(*this->grid_, this->ctx_.device, q_, v));
    frame_transform()(q);
    return q;
  }

  Params p_;
  Profiles prof_;
  Field<T> q_, tmp_, tmp2_;   // kVars components each: the state, and two stages' outputs
  Field<T> wforce_;
  Buffer<T> bg_;
  index_t start_z_ = 0;
  std::unique_ptr<grid::HaloExchange<T>> halo_;
  bool seam_x_ = false;  // the x sweep reads across the periodic seam itself (SweepStage::seam)
  Box cells_inner_[2];
  std::vector<Box> cells_outer_[2];
  kernels::grid::BoxList walls_;   // the halo rows beyond each wall this rank holds
  index_t wall_src_[2] = {0, 0};   // the owned row each mirrors
  Box inject_;
};

}  // namespace strata::euler2d
