// `strata validate` for md, on the chosen backend and precision, each rank
// on its own (MPI_COMM_SELF): the neighbour-list pair kernel against the
// direct O(N^2) sum, and an fcc start's exact temperature and its momentum
// after 100 NVE steps.
#include "models/md/self_checks.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <sstream>

#include "engine/runtime/mpi_context.hpp"
#include "models/md/direct_sum.hpp"
#include "models/md/initial_state.hpp"
#include "models/md/md_simulation.hpp"

namespace strata::md {

namespace {

template <class T>
CheckResult force_check(const Device& device, const MpiContext& self) {
  constexpr double kBox = 6.5, kCutoff = 2.5, kSkin = 0.3;
  const HostParticles atoms = random_atoms(180, kBox, 0.85, 5);
  const Domain domain(self, {kBox, kBox, kBox});
  AtomSystem<T> system(device, domain, kCutoff + kSkin);
  system.load(atoms, false);
  system.compute_forces(kernels::particles::LennardJones<T>::make(1.0, 1.0, kCutoff, true), false);
  const HostParticles h = system.download();
  std::vector<double> pos(3 * h.size());
  for (std::size_t k = 0; k < h.size(); ++k)
    for (std::size_t a = 0; a < 3; ++a) pos[3 * static_cast<std::size_t>(h.index[k]) + a] = static_cast<T>(h.position[3 * k + a]);
  const DirectSum ref = direct_sum(pos, kBox, 1.0, 1.0, kCutoff, true);
  const std::vector<double> f = system.host_forces();
  const double eps = std::numeric_limits<T>::epsilon();
  double worst = 0;
  for (std::size_t k = 0; k < h.size(); ++k) {
    const std::size_t i = static_cast<std::size_t>(h.index[k]);
    for (std::size_t a = 0; a < 3; ++a)
      worst = std::max(worst, std::abs(f[3 * k + a] - ref.force[3 * i + a]) / (eps * ref.scale[i]));
  }
  return CheckResult::within(
      "md LJ forces vs direct sum (180 atoms)", worst, 0, kForceRoundings,
      "max |F - F_direct| in units of eps sum_j |f_ij|: 10 roundings per pair term + <= 120 terms summed");
}

template <class T>
std::vector<CheckResult> fcc_checks(RunContext& ctx, const MpiContext& self) {
  std::ostringstream sink;   // a few thermo rows
  RunContext quiet{self, nullptr, ctx.device, ctx.precision, ctx.timers, nullptr, sink, false};
  Params p;
  p.cells = {4, 4, 4};
  p.steps = 100;
  p.thermo_every = 100;
  auto domain = std::make_unique<Domain>(self, std::array<double, 3>{4 * p.lattice_constant(), 4 * p.lattice_constant(),
                                                                     4 * p.lattice_constant()});
  HostParticles owned = fcc_lattice(p, *domain);
  MdSimulation<T> sim(quiet, p, std::move(domain), std::move(owned), p.fcc_atoms(), {});
  const double eps = std::numeric_limits<T>::epsilon();
  const double n = static_cast<double>(p.fcc_atoms());
  std::vector<CheckResult> out;
  // Velocities rounded to T once: each v^2 relative 2 eps, summed exactly.
  out.push_back(CheckResult::within("md fcc start: T = 1.44 exactly (3N - 3 dof)", sim.last_thermo().temperature,
                                    p.temperature, 4 * eps * p.temperature,
                                    "exact sums; the velocities rounded to the precision once"));
  while (sim.steps_done() < sim.steps()) sim.advance();
  const Thermo& t = sim.last_thermo();
  out.push_back(CheckResult::within(
      "md NVE 256 atoms, 100 steps: |total momentum|",
      std::sqrt(t.momentum[0] * t.momentum[0] + t.momentum[1] * t.momentum[1] + t.momentum[2] * t.momentum[2]), 0,
      100 * n * (p.dt * 80 * eps * 100 + 8 * eps),
      "per step N (dt 80 eps 100 + 8 eps): force-sum and update rounding (full lists: pair forces cancel)"));
  return out;
}

}  // namespace

std::vector<CheckResult> self_checks(RunContext& ctx) {
  const MpiContext self(MPI_COMM_SELF);
  std::vector<CheckResult> out;
  if (ctx.precision == Precision::fp32) {
    out.push_back(force_check<float>(ctx.device, self));
    for (CheckResult& r : fcc_checks<float>(ctx, self)) out.push_back(r);
  } else {
    out.push_back(force_check<double>(ctx.device, self));
    for (CheckResult& r : fcc_checks<double>(ctx, self)) out.push_back(r);
  }
  return out;
}

}  // namespace strata::md
