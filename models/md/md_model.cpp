// The `md` model: Lennard-Jones molecular dynamics in a periodic box, in LJ
// reduced units, with LAMMPS's thermo conventions (models/md/thermo.hpp),
// spatial decomposition over MPI (models/md/domain.hpp), neighbour lists
// with a skin (models/md/atom_system.hpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/particles/h5md_input.hpp"
#include "engine/particles/particle_state.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/format.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "models/md/initial_state.hpp"
#include "models/md/md_simulation.hpp"
#include "models/md/params.hpp"
#include "models/md/self_checks.hpp"

namespace strata::md {

// Checkpoints (engine/particles/particle_state.hpp, in global-index order):
// md/atoms holds positions (as held: not wrapped since the last build),
// velocities and image counts; md/build holds the positions the neighbour
// lists were built from (x0) as its positions and the last step's forces as
// its velocities. A restart rebuilds from x0, so the lists, ghosts and
// summation orders are those of the interrupted run, and takes the forces
// as they were (the Langevin part cannot be recomputed): the run continues
// bitwise on the same decomposition.
template <class T>
void MdSimulation<T>::save(StateWriter& w) const {
  w.scalar("md/step", step_);
  w.scalar("md/frames", output_->frames());
  w.scalar("md/rows", output_->rows());
  w.scalar("md/last_frame_step", last_frame_step_);
  HostParticles atoms = atoms_.download();
  HostParticles build;
  build.index = atoms.index;
  build.position = std::move(atoms.reference);
  build.velocity = atoms_.host_forces();
  atoms.reference.clear();
  particles::save_particles(w, ctx_.mpi, "md/atoms", atoms, n_);
  particles::save_particles(w, ctx_.mpi, "md/build", build, n_);
}

template <class T>
void MdSimulation<T>::restore(StateReader& r) {
  step_ = r.integer("md/step");
  last_frame_step_ = r.integer("md/last_frame_step");
  output_->resume(r.integer("md/frames"), r.integer("md/rows"), identity_);
  identity_ = {};
  const HostParticles a = particles::restore_particles(r, ctx_.mpi, "md/atoms");
  const HostParticles b = particles::restore_particles(r, ctx_.mpi, "md/build");
  // To the owners of the build positions (both shares are the same rows).
  std::vector<int> dest(b.size());
  for (std::size_t k = 0; k < b.size(); ++k) dest[k] = domain_->owner(&b.position[3 * k]);
  HostParticles mine = particles::route(ctx_.mpi, a, dest);
  const HostParticles built = particles::route(ctx_.mpi, b, dest);
  mine.reference = built.position;
  atoms_.load(std::move(mine), true);
  // The forces in the rebuilt order (`built` is sorted by index).
  const HostParticles now = atoms_.download();
  std::vector<double> f(3 * now.size());
  for (std::size_t k = 0; k < now.size(); ++k) {
    const auto it = std::lower_bound(built.index.begin(), built.index.end(), now.index[k]);
    const std::size_t row = static_cast<std::size_t>(it - built.index.begin());
    for (std::size_t c = 0; c < 3; ++c) f[3 * k + c] = built.velocity[3 * row + c];
  }
  atoms_.upload_forces(f);
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
  c.fail(p.initial == Initial::fcc ? "md.cells" : "md.initial_file",
         format("the box %.6g x %.6g x %.6g over %d x %d x %d ranks gives sub-boxes %.6g wide, less than cutoff + "
                "skin = %.6g: use fewer ranks or a larger system",
                d.length()[0], d.length()[1], d.length()[2], d.ranks()[0], d.ranks()[1], d.ranks()[2], d.min_width(),
                p.ghost_cutoff()));
}

// The system a run will have: its atom count and box (collective for a
// file: the file is read; an input error names the key when it is unfit).
struct SystemSize {
  std::int64_t atoms = 0;
  std::array<double, 3> box{0, 0, 0};
};

particles::H5mdSnapshot read_snapshot(const RunContext& ctx, const Params& p) {
  particles::H5mdSnapshot snap =
      particles::read_h5md(p.initial_file, "md.initial_file", {p.initial_frame, "md.initial_frame"}, ctx.mpi);
  if (!snap.has_box)
    ctx.config->fail("md.initial_file", p.initial_file + " has no /particles/all/box/edges: md needs the periodic box");
  return snap;
}

SystemSize system_size(const RunContext& ctx, const Params& p) {
  if (p.initial == Initial::fcc) return {p.fcc_atoms(), fcc_box(p)};
  const particles::H5mdSnapshot snap = read_snapshot(ctx, p);
  return {snap.n, snap.box.edges};
}

// initial = "file": the snapshot's atoms, wrapped into its box and sent to
// their owners.
struct FileStart {
  std::unique_ptr<Domain> domain;
  HostParticles owned;
  std::vector<std::int64_t> ids;
  std::int64_t atoms = 0;
};

FileStart read_start_file(const RunContext& ctx, const Params& p) {
  particles::H5mdSnapshot snap = read_snapshot(ctx, p);
  if (!ctx.restarting) ctx.out << "md: initial state from " << particles::describe_frame(snap, p.initial_file) << "\n";
  FileStart s;
  s.atoms = snap.n;
  s.domain = std::make_unique<Domain>(ctx.mpi, snap.box.edges);
  HostParticles& q = snap.particles;
  q.image.assign(q.position.size(), 0);
  std::vector<int> dest(q.size());
  std::string unplaced;   // the first atom that is no place in the box
  for (std::size_t k = 0; k < q.size(); ++k) {
    for (int a = 0; a < 3; ++a) {
      const std::size_t e = 3 * k + static_cast<std::size_t>(a);
      const double given = q.position[e];
      q.position[e] -= snap.box.origin.at(a);
      int image = 0;
      if (!wrap_periodic(q.position[e], snap.box.edges.at(a), image) && unplaced.empty())
        unplaced = format("rank %d: md: atom %lld of md.initial_file %s has coordinate %d = %.6g, not a place "
                          "in the periodic box of edge %.6g (not finite, or more than 2^30 box lengths out), at "
                          "step 0",
                          ctx.mpi.rank(), static_cast<long long>(q.id.empty() ? q.index[k] : q.id[k]),
                          p.initial_file.c_str(), a, given, snap.box.edges.at(a));
      q.image[e] = image;
    }
    dest[k] = unplaced.empty() ? s.domain->owner(&q.position[3 * k]) : ctx.mpi.rank();
  }
  // Before the routing, which every rank must enter: the same error everywhere.
  ctx.mpi.check_collective(unplaced, static_cast<int>(ExitCode::numerical), /*name_rank=*/false);
  s.owned = particles::route(ctx.mpi, q, dest);
  s.ids = std::move(s.owned.id);
  s.owned.id.clear();
  return s;
}

template <class T>
std::unique_ptr<Simulation> start_md(RunContext& ctx, const Params& p) {
  if (p.initial == Initial::file) {
    FileStart s = read_start_file(ctx, p);
    check_widths(*ctx.config, p, *s.domain);
    return std::make_unique<MdSimulation<T>>(ctx, p, std::move(s.domain), std::move(s.owned), s.atoms,
                                             std::move(s.ids));
  }
  auto domain = std::make_unique<Domain>(ctx.mpi, fcc_box(p));
  check_widths(*ctx.config, p, *domain);
  HostParticles owned = fcc_lattice(p, *domain);
  return std::make_unique<MdSimulation<T>>(ctx, p, std::move(domain), std::move(owned), p.fcc_atoms(),
                                           std::vector<std::int64_t>{});
}

class MdModel final : public ModelOf<Params, read_params, declare_schema> {
 public:
  std::string_view name() const override { return "md"; }
  std::string_view summary() const override {
    return "Lennard-Jones molecular dynamics in a periodic box (LJ units, LAMMPS's thermo conventions): cell and "
           "neighbour lists with a skin, velocity Verlet or Langevin, spatial decomposition over MPI";
  }
  std::vector<CheckResult> self_checks(RunContext& ctx) const override { return md::self_checks(ctx); }

 protected:
  void plan(const RunContext& ctx, const Params& p) const override {
    const std::int64_t n = system_size(ctx, p).atoms;
    ctx.out << format("plan: %lld atoms (%s), %lld steps of dt = %.6g, cutoff %.6g + skin %.6g over %d rank(s); "
                      "memory %.0f bytes per atom (%s)\n",
                      static_cast<long long>(n), p.initial == Initial::fcc ? "fcc lattice" : p.initial_file.c_str(),
                      static_cast<long long>(p.steps), p.dt, p.cutoff, p.skin, ctx.mpi.size(),
                      bytes_per_atom(p, ctx.precision), to_string(ctx.precision).data());
  }
  MemoryPlan memory(const RunContext& ctx, const Params& p) const override {
    const SystemSize size = system_size(ctx, p);
    // The decomposition is checked here, before any output exists.
    check_widths(*ctx.config, p, Domain(ctx.mpi, size.box));
    const double n = static_cast<double>(size.atoms) / ctx.mpi.size();
    const double bytes = n * bytes_per_atom(p, ctx.precision);
    // Host: copies of the atoms at the start, checkpoints and frames.
    return MemoryPlan::of(ctx.device, static_cast<std::size_t>(bytes), static_cast<std::size_t>(n * 128),
                          "use fewer atoms (md.cells) or more ranks");
  }
  std::unique_ptr<Simulation> start(RunContext& ctx, const Params& p) const override {
    if (ctx.precision == Precision::fp32) return start_md<float>(ctx, p);
    return start_md<double>(ctx, p);
  }

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
