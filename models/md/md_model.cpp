// The `md` model: Lennard-Jones molecular dynamics in a periodic box, in LJ
// reduced units, with LAMMPS's thermo conventions (models/md/thermo.hpp),
// spatial decomposition over MPI (models/md/domain.hpp), neighbour lists
// with a skin (models/md/atom_system.hpp).
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "models/md/initial_state.hpp"
#include "models/md/md_simulation.hpp"
#include "models/md/params.hpp"

namespace strata::md {

template <class T>
void MdSimulation<T>::save(StateWriter&) const {
  throw Error(ExitCode::internal, "md: checkpoints are not implemented yet");
}

template <class T>
void MdSimulation<T>::restore(StateReader&) {
  throw Error(ExitCode::internal, "md: checkpoints are not implemented yet");
}

namespace {

std::array<double, 3> fcc_box(const Params& p) {
  const double a = p.lattice_constant();
  return {a * static_cast<double>(p.cells[0]), a * static_cast<double>(p.cells[1]),
          a * static_cast<double>(p.cells[2])};
}

// Every sub-box must be at least the ghost cutoff wide: ghosts come from the
// nearest neighbour only (one hop per axis).
void check_widths(const Config& c, const Params& p, const Domain& d) {
  if (d.min_width() >= p.ghost_cutoff()) return;
  char msg[400];
  std::snprintf(msg, sizeof msg,
                "the box %.6g x %.6g x %.6g over %d x %d x %d ranks gives sub-boxes %.6g wide, less than cutoff + "
                "skin = %.6g: use fewer ranks or a larger system",
                d.length()[0], d.length()[1], d.length()[2], d.procs()[0], d.procs()[1], d.procs()[2], d.min_width(),
                p.ghost_cutoff());
  c.fail(p.initial == Initial::fcc ? "md.cells" : "md.initial_file", msg);
}

template <class T>
std::unique_ptr<Simulation> start_md(RunContext& ctx, const Params& p) {
  if (p.initial != Initial::fcc) throw InputError("md: initial = \"file\" is not available yet");
  auto domain = std::make_unique<Domain>(ctx.mpi, fcc_box(p));
  check_widths(*ctx.config, p, *domain);
  HostAtoms owned = fcc_lattice(p, *domain);
  return std::make_unique<MdSimulation<T>>(ctx, p, std::move(domain), std::move(owned), p.fcc_atoms());
}

class MdModel final : public Model {
 public:
  std::string_view name() const override { return "md"; }
  std::string_view summary() const override {
    return "Lennard-Jones molecular dynamics in a periodic box (LJ units, LAMMPS's thermo conventions): cell and "
           "neighbour lists with a skin, velocity Verlet or Langevin, spatial decomposition over MPI";
  }
  void declare(Schema& s) const override { declare_schema(s); }
  void check(const Config& c) const override { (void)read_params(c); }
  void plan(const RunContext& ctx) const override {
    const Params p = read_params(*ctx.config);
    char text[400];
    std::snprintf(text, sizeof text, "plan: %lld atoms, %lld steps of dt = %.6g, cutoff %.6g + skin %.6g\n",
                  static_cast<long long>(p.fcc_atoms()), static_cast<long long>(p.steps), p.dt, p.cutoff, p.skin);
    ctx.out << text;
  }
  MemoryPlan memory(const RunContext& ctx) const override {
    const Params p = read_params(*ctx.config);
    const double n = static_cast<double>(p.fcc_atoms()) / ctx.mpi.size();
    const double bytes = n * bytes_per_atom(p, ctx.precision);
    MemoryPlan m;
    if (ctx.device.backend == Backend::cuda) {
      m.device_bytes = static_cast<std::size_t>(bytes);
    } else {
      m.host_bytes = static_cast<std::size_t>(bytes);
    }
    m.host_bytes += static_cast<std::size_t>(n * 128);   // host mirrors during a rebuild
    m.hint = "use fewer atoms (md.cells) or more ranks";
    return m;
  }
  std::unique_ptr<Simulation> start(RunContext& ctx) const override {
    const Params p = read_params(*ctx.config);
    if (ctx.precision == Precision::fp32) return start_md<float>(ctx, p);
    return start_md<double>(ctx, p);
  }
  std::vector<CheckResult> self_checks(RunContext&) const override { return {}; }

  // Neighbours within cutoff + skin at the density, with the list's 25%
  // headroom; ghosts of a sub-box as if it were a cube holding its share.
  static double bytes_per_atom(const Params& p, Precision precision) {
    const double rg = p.ghost_cutoff();
    const double neighbours = 1.25 * 4.18879 * rg * rg * rg * p.density + 8;
    const double ghost_ratio = 0.3;
    return precision == Precision::fp32 ? AtomSystem<float>::bytes_per_atom(neighbours, ghost_ratio)
                                        : AtomSystem<double>::bytes_per_atom(neighbours, ghost_ratio);
  }
};

}  // namespace

STRATA_REGISTER_MODEL(MdModel);

}  // namespace strata::md
