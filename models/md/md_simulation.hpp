// md's running instance: velocity Verlet (optionally with the Langevin
// force) over an AtomSystem, thermo rows every thermo_every steps, printed
// on rank 0 in LAMMPS's thermo_style one columns.
#pragma once

#include <chrono>
#include <limits>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/cuda_runtime.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/timers.hpp"
#include "kernels/particles/integrate.hpp"
#include "models/md/atom_system.hpp"
#include "models/md/params.hpp"
#include "models/md/thermo.hpp"

namespace strata::md {

// The atoms a run starts from, on their owners, and the box.
struct StartingState {
  std::array<double, 3> box{0, 0, 0};
  std::int64_t atoms = 0;
  HostAtoms owned;
};

template <class T>
class MdSimulation : public Simulation {
 public:
  // `owned`: this rank's atoms (on their owner or not: the first build migrates
  // them one hop, so start-up places them on their owners); `atoms`: N.
  MdSimulation(RunContext& ctx, const Params& p, std::unique_ptr<Domain> domain, HostAtoms owned, std::int64_t atoms)
      : ctx_(ctx), p_(p), domain_(std::move(domain)), atoms_(ctx.device, *domain_, p.ghost_cutoff()), n_(atoms) {
    lj_ = kernels::particles::LennardJones<T>::make(p.epsilon, p.sigma, p.cutoff, p.shift);
    atoms_.load(std::move(owned), false);
    forces(0, true);
    if (!ctx_.restarting) record_thermo();
  }

  std::int64_t steps() const override { return p_.steps; }
  std::int64_t steps_done() const override { return step_; }
  double work_total() const override { return static_cast<double>(p_.steps); }
  double work_done() const override { return static_cast<double>(step_); }
  std::string work_unit() const override { return "steps"; }
  const Thermo& last_thermo() const { return last_; }
  const std::vector<std::vector<double>>& thermo_rows() const { return rows_; }
  AtomSystem<T>& atoms() { return atoms_; }

  void advance() override {
    using namespace kernels::particles;
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t next = step_ + 1;
    const bool thermo = next % p_.thermo_every == 0 || next == p_.steps;
    ctx_.mpi.collective([&] {
      const Device& dev = ctx_.device;
      const T dt = static_cast<T>(p_.dt), half = static_cast<T>(0.5 * p_.dt);
      parallel_for(dev, atoms_.n_local(),
                   KickDrift<T>{atoms_.x(), atoms_.y(), atoms_.z(), atoms_.vx(), atoms_.vy(), atoms_.vz(),
                                atoms_.fx(), atoms_.fy(), atoms_.fz(), dt, half});
      {
        auto t = ctx_.timers.scope("neighbours");
        if (atoms_.needs_rebuild(p_.skin)) {
          atoms_.rebuild();
        } else {
          atoms_.forward_positions();
        }
      }
      forces(next, thermo);
      parallel_for(dev, atoms_.n_local(),
                   Kick<T>{atoms_.vx(), atoms_.vy(), atoms_.vz(), atoms_.fx(), atoms_.fy(), atoms_.fz(), half});
    });
    if (ctx_.device.backend == Backend::cuda) cuda::synchronize();
    step_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    step_ = next;
    ++steps_this_run_;
    if (thermo) record_thermo();
  }

  std::optional<std::string> nonfinite() const override {
    const double bad = parallel_reduce(
        ctx_.device, atoms_.n_local(),
        kernels::particles::NonFiniteAtom<T>{atoms_.x(), atoms_.y(), atoms_.z(), atoms_.vx(), atoms_.vy(), atoms_.vz()},
        0.0, Plus{});
    if (bad > 0)
      return std::to_string(static_cast<long long>(bad)) + " atom(s) with a non-finite position or velocity at step " +
             std::to_string(step_);
    return std::nullopt;
  }
  void inject_nonfinite() override {
    // The first owned atom's vx; reloading from x0 keeps the lists as they are.
    HostAtoms h = atoms_.download();
    if (!h.velocity.empty()) h.velocity[0] = std::numeric_limits<double>::quiet_NaN();
    atoms_.load(std::move(h), true);
  }

  void save(StateWriter& w) const override;
  void restore(StateReader& r) override;

  Performance finish() override {
    const double seconds = ctx_.mpi.max(step_seconds_);
    const double atom_steps = static_cast<double>(n_) * static_cast<double>(steps_this_run_);
    char line[256];
    std::snprintf(line, sizeof line,
                  "md: %lld atoms, %lld steps, %lld neighbour-list builds; %.4g s, %.4g atom-steps/s\n",
                  static_cast<long long>(n_), static_cast<long long>(step_),
                  static_cast<long long>(atoms_.rebuilds()), seconds, seconds > 0 ? atom_steps / seconds : 0.0);
    ctx_.out << line;
    Performance perf;
    perf.figures = {{"atoms", "", static_cast<double>(n_)},
                    {"steps", "", static_cast<double>(step_)},
                    {"steps_this_run", "", static_cast<double>(steps_this_run_)},
                    {"compute_seconds", "s", seconds},
                    {"atom_steps_per_second", "1/s", seconds > 0 ? atom_steps / seconds : 0.0}};
    return perf;
  }

 protected:
  // Pair forces for step `step` (plus the Langevin force keyed by it).
  void forces(std::int64_t step, bool tally) {
    auto t = ctx_.timers.scope("forces");
    atoms_.compute_forces(lj_, tally);
    if (p_.thermostat == Thermostat::langevin) {
      const T gamma = static_cast<T>(1.0 / p_.damp);
      const T strength = static_cast<T>(std::sqrt(2.0 * p_.temperature / (p_.damp * p_.dt)));
      parallel_for(ctx_.device, atoms_.n_local(),
                   kernels::particles::LangevinForce<T>{atoms_.vx(), atoms_.vy(), atoms_.vz(), atoms_.index(),
                                                        atoms_.fx(), atoms_.fy(), atoms_.fz(),
                                                        rng::philox_key(p_.seed), static_cast<std::uint64_t>(step),
                                                        gamma, strength});
    }
  }

  Thermo compute_thermo() const {
    using kernels::particles::AtomValue;
    const Device& dev = ctx_.device;
    const MPI_Comm comm = domain_->comm();
    const std::int64_t n = atoms_.n_local();
    const double v2 = exact_sum(dev, comm, n, AtomValue<T>{atoms_.vx(), atoms_.vy(), atoms_.vz(), true});
    const double pe = exact_sum(dev, comm, n, AtomValue<T>{atoms_.energy()});
    const double w = exact_sum(dev, comm, n, AtomValue<T>{atoms_.virial()});
    const double momentum[3] = {exact_sum(dev, comm, n, AtomValue<T>{atoms_.vx()}),
                                exact_sum(dev, comm, n, AtomValue<T>{atoms_.vy()}),
                                exact_sum(dev, comm, n, AtomValue<T>{atoms_.vz()})};
    return thermo_from_sums(v2, pe, w, momentum, n_, domain_->volume());
  }

  void record_thermo() {
    auto t = ctx_.timers.scope("thermo");
    last_ = compute_thermo();
    if (rows_.empty() && !header_printed_) {
      ctx_.out << "Step Temp E_pair E_mol TotEng Press\n";
      header_printed_ = true;
    }
    char line[256];
    std::snprintf(line, sizeof line, "%10lld %.15g %.15g 0 %.15g %.15g\n", static_cast<long long>(step_),
                  last_.temperature, last_.pe, last_.etotal, last_.pressure);
    ctx_.out << line;
    rows_.push_back({static_cast<double>(step_), last_.temperature, last_.pe, last_.ke, last_.etotal, last_.pressure,
                     last_.momentum[0], last_.momentum[1], last_.momentum[2]});
  }

  RunContext& ctx_;
  Params p_;
  std::unique_ptr<Domain> domain_;
  AtomSystem<T> atoms_;
  std::int64_t n_ = 0;
  kernels::particles::LennardJones<T> lj_{};
  std::int64_t step_ = 0, steps_this_run_ = 0;
  double step_seconds_ = 0;
  Thermo last_;
  std::vector<std::vector<double>> rows_;
  bool header_printed_ = false;
};

}  // namespace strata::md
