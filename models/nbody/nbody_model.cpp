// The `nbody` model: gravitational N-body by direct summation over all
// pairs, Plummer softening, kick-drift-kick leapfrog. Each rank owns the
// even share of the bodies by index; the source blocks come to every rank
// in ascending block order by pipelined non-blocking broadcasts (block s+1
// travels while block s is summed), so each body's force is summed over
// j = 0..N-1 in ascending order on any number of ranks and the trajectories
// of 1 and N ranks are bitwise identical. Diagnostics are exact tree sums
// over the body index (TreeSum), also independent of the decomposition.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <sstream>
#include <string>

#include "engine/backend/buffer.hpp"
#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/particles/h5md_output.hpp"
#include "engine/particles/particle_state.hpp"
#include "engine/runtime/format.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/stop_request.hpp"
#include "engine/runtime/timers.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "models/nbody/kernels.hpp"
#include "models/nbody/initial_state.hpp"
#include "models/nbody/nbody_params.hpp"

namespace strata::nbody {
namespace {

namespace kp = kernels::particles;
using particles::HostParticles;
using particles::Share;

// Sources summed between two progress calls of the broadcast in flight:
// at least this many, and a block in at most kPiecesPerBlock launches.
constexpr std::int64_t kSourcePiece = 4096;
constexpr std::int64_t kPiecesPerBlock = 8;

// Pair interactions queued on the device between two waits for it (a
// fence every few steps, at the least every step): about 0.1 s of an H200
// at the FP64 goal, so a signal or the wall-time check is never further
// behind the device than that (STYLE.md: bound signal latency by the work
// between checks), while small runs do not stop the device every step.
constexpr double kQueuedPairs = 68719476736.0;   // 2^36

// The observables, in the order of a diagnostics row.
std::vector<particles::Observable> observables() {
  return {{"kinetic_energy", "1", "kinetic energy", 0},
          {"potential_energy", "1", "potential energy (softened)", 0},
          {"total_energy", "1", "total energy", 0},
          {"momentum", "1", "total momentum", 3},
          {"angular_momentum", "1", "total angular momentum about the origin", 3},
          {"virial_ratio", "1", "virial ratio 2K/|W|", 0}};
}

struct Diagnostics {
  double kinetic = 0, potential = 0, momentum[3] = {0, 0, 0}, angular[3] = {0, 0, 0};
  double total() const { return kinetic + potential; }
  double virial() const { return potential != 0 ? 2 * kinetic / std::fabs(potential) : 0.0; }
  std::vector<std::vector<double>> row() const {
    return {{kinetic}, {potential}, {total()}, {momentum[0], momentum[1], momentum[2]},
            {angular[0], angular[1], angular[2]}, {virial()}};
  }
};

template <class Real>
class NbodySimulation final : public Simulation {
 public:
  NbodySimulation(RunContext& ctx, const Params& p) : ctx_(ctx), p_(p), copies_(ctx.device) {
    HostParticles bodies;
    {
      auto t = ctx.timers.scope("initial");
      std::string read_from;
      bodies = initial_bodies(p.initial, ctx.mpi, n_, &read_from);
      if (!read_from.empty() && !ctx.restarting) ctx.out << "nbody: initial state from " << read_from << "\n";
    }
    mine_ = particles::even_share(n_, ctx.mpi.rank(), ctx.mpi.size());
    const auto count = static_cast<std::size_t>(mine_.count);
    body_ = Buffer<Real>(ctx.device, 4 * count);
    vel_ = Buffer<Real>(ctx.device, 3 * count);
    acc_ = Buffer<Real>(ctx.device, 3 * count);
    phi_ = Buffer<Real>(ctx.device, count);
    if (ctx.mpi.size() > 1) {
      std::int64_t widest = 0;
      for (int r = 0; r < ctx.mpi.size(); ++r) widest = std::max(widest, particles::even_share(n_, r, ctx.mpi.size()).count);
      for (auto& h : stage_) h.resize(4 * static_cast<std::size_t>(widest));
      own_.resize(4 * count);
      source_ = Buffer<Real>(ctx.device, 4 * static_cast<std::size_t>(widest));
    }
    upload(bodies);
    common_mass_ = common_mass(bodies);
    steps_ = p.steps();
    fence_every_ = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(kQueuedPairs / std::max(1.0, static_cast<double>(n_) * static_cast<double>(n_))));
    warn_about_the_step(bodies);
    // The first forces are O(N^2) before any step: a signal there stops the
    // run (stopped_during_setup) instead of waiting for them.
    setting_up_ = true;
    forces(true);
    setting_up_ = false;
    if (ctx.mpi.any(stop_signal() != 0)) throw stopped_during_setup("the initial forces (O(N^2))");
    if (p.initial.kind == "plummer" && p.virialize) virialize();
    output_ = std::make_unique<particles::H5mdOutput>(ctx.output, ctx.mpi, n_, extent(bodies), p.units(),
                                                      particles::run_author(ctx.config), observables());
    if (!ctx.restarting) {
      output_->create(download());
      write_output(true, true);
    }
  }

  std::int64_t steps() const override { return steps_; }
  std::int64_t steps_done() const override { return step_; }

  // A step launches three kernels (kick and drift, the sums, the kick) on
  // one rank, and waits for nothing on the device on one rank: the host
  // waits only where it reads the bodies (diagnostics, frames) and every
  // fence_every_ steps, so that it is never more than about kQueuedPairs
  // pair interactions ahead of the device. On P ranks each step also waits
  // for its own block's host copy (the broadcast sends it from the host)
  // and uploads the P - 1 blocks it receives.
  void advance() override {
    // The last step may be shorter, to end exactly at t_end.
    const double dt = step_ + 1 == steps_ ? p_.t_end() - time_ : p_.dt;
    const std::int64_t next = step_ + 1;
    const bool last = next == steps_;
    const bool frame = last || (p_.output_every > 0 && next % p_.output_every == 0);
    const bool diag = last || next % p_.diag_every == 0;
    {
      const auto t0 = std::chrono::steady_clock::now();
      ctx_.mpi.collective([&] { kick_drift_kick(static_cast<Real>(dt), diag); });
      // The step's time includes the device's where the host waits for it.
      if (frame || diag || next % fence_every_ == 0) ctx_.device.fence();
      step_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    step_ = next;
    ++steps_this_run_;
    if (diag) phi_step_ = step_;
    time_ = step_ == steps_ ? p_.t_end() : static_cast<double>(step_) * p_.dt;
    write_output(frame, diag);
  }

  std::optional<std::string> nonfinite() const override {
    const HostParticles h = download();
    for (std::size_t k = 0; k < h.size(); ++k)
      for (int d = 0; d < 3; ++d)
        if (!std::isfinite(h.position[3 * k + d]) || !std::isfinite(h.velocity[3 * k + d]))
          return "non-finite position or velocity of body " + std::to_string(h.index[k]) + " at t = " +
                 std::to_string(time_);
    return std::nullopt;
  }

  void inject_nonfinite() override {
    if (mine_.count == 0) return;
    std::vector<Real> b(4 * static_cast<std::size_t>(mine_.count));
    body_.copy_to_host(b.data(), b.size());
    b[0] = std::numeric_limits<Real>::quiet_NaN();
    body_.copy_from_host(b.data(), b.size());
  }

  // The state at the failure as one more frame and observables row (unless
  // this step's are written), so the blow-up can be looked at.
  void record_failure() override {
    if (failure_recorded_) return;
    failure_recorded_ = true;
    try {
      write_output(last_frame_step_ != step_, last_diag_step_ != step_);
    } catch (const std::exception&) {
      // The verdict is already known; a failing write must not hide it.
    }
  }

  void save(StateWriter& w) const override {
    w.scalar("nbody/step", step_);
    w.scalar("nbody/time", time_);
    w.scalar("nbody/frames", output_->frames());
    w.scalar("nbody/rows", output_->rows());
    w.scalar("nbody/initial_energy", initial_energy_);
    particles::save_particles(w, ctx_.mpi, "nbody/bodies", download(), n_);
  }

  void restore(StateReader& r) override {
    step_ = r.integer("nbody/step");
    time_ = r.real("nbody/time");
    initial_energy_ = r.real("nbody/initial_energy");
    const HostParticles bodies = particles::restore_particles(r, ctx_.mpi, "nbody/bodies");
    if (r.integer("nbody/bodies/n") != n_)
      throw Error(ExitCode::bad_input, "checkpoint holds " + std::to_string(r.integer("nbody/bodies/n")) +
                                           " bodies, the input makes " + std::to_string(n_), true);
    upload(bodies);   // the even share is this rank's block: no migration
    forces(true);     // the same sums, in the same order, as before the checkpoint
    phi_step_ = step_;
    output_->resume(r.integer("nbody/frames"), r.integer("nbody/rows"), download());
  }

  Performance finish() override {
    ctx_.out << format("nbody: %lld bodies, t = %.6g, E = %.15g, |dE/E0| = %.3e, 2K/|W| = %.6f\n",
                       static_cast<long long>(n_), time_, last_.total(), relative_drift(last_), last_.virial());
    if (max_drift_ > kDriftWarning) {
      const std::string text = format("the total energy changed by up to %.3g of itself (|dE/E| > %.2g): the run "
                                      "did not follow the dynamics; lower nbody.dt or raise nbody.softening",
                                      max_drift_, kDriftWarning);
      ctx_.out << "warning: " << text << "\n";
      if (ctx_.output != nullptr) ctx_.output->attribute("/observables/total_energy", "warning", text);
    }
    const double seconds = ctx_.mpi.max(step_seconds_);
    // One force evaluation per step, N (N - 1) pairs each.
    const double interactions = static_cast<double>(n_) * static_cast<double>(n_ - 1) * static_cast<double>(steps_this_run_);
    const double rate = seconds > 0 ? interactions / seconds : 0.0;
    Performance perf;
    perf.figures = {{"bodies", "", static_cast<double>(n_)},
                    {"steps", "", static_cast<double>(steps_)},
                    {"steps_this_run", "", static_cast<double>(steps_this_run_)},
                    {"compute_seconds", "s", seconds},
                    {"interactions_per_second", "1/s", rate},
                    {"gflops_20_per_interaction", "GFLOP/s", rate * 20 / 1e9},
                    {"max_relative_energy_error", "1", max_drift_}};
    return perf;
  }

 private:
  // --- state transfer ---------------------------------------------------------
  void upload(const HostParticles& h) {
    const auto count = static_cast<std::size_t>(mine_.count);
    if (h.size() != count) throw std::logic_error("nbody: a rank's bodies are not its even share");
    std::vector<Real> b(4 * count), v(3 * count);
    for (std::size_t k = 0; k < count; ++k) {
      for (int d = 0; d < 3; ++d) {
        b[4 * k + d] = static_cast<Real>(h.position[3 * k + d]);
        v[3 * k + d] = static_cast<Real>(h.velocity[3 * k + d]);
      }
      b[4 * k + 3] = static_cast<Real>(h.mass[k]);
    }
    body_.copy_from_host(b.data(), b.size());
    vel_.copy_from_host(v.data(), v.size());
  }

  HostParticles download(std::vector<Real>* phi = nullptr) const {
    const auto count = static_cast<std::size_t>(mine_.count);
    std::vector<Real> b(4 * count), v(3 * count);
    body_.copy_to_host(b.data(), b.size());
    vel_.copy_to_host(v.data(), v.size());
    if (phi != nullptr) {
      phi->resize(count);
      phi_.copy_to_host(phi->data(), count);
    }
    HostParticles h;
    h.index.resize(count);
    h.position.resize(3 * count);
    h.velocity.resize(3 * count);
    h.mass.resize(count);
    for (std::size_t k = 0; k < count; ++k) {
      h.index[k] = mine_.first + static_cast<std::int64_t>(k);
      for (int d = 0; d < 3; ++d) {
        h.position[3 * k + d] = b[4 * k + d];
        h.velocity[3 * k + d] = v[3 * k + d];
      }
      h.mass[k] = b[4 * k + 3];
    }
    return h;
  }

  // The box H5MD records: an open system, so only the initial extent.
  particles::Box extent(const HostParticles& h) const {
    double r = 0;
    for (double x : h.position) r = std::max(r, std::fabs(x));
    r = ctx_.mpi.max(r);
    particles::Box box;
    box.periodic = false;
    box.origin = {-r, -r, -r};
    box.edges = {2 * r, 2 * r, 2 * r};
    return box;
  }

  // --- the step -----------------------------------------------------------------
  // Adds the pull of sources s (4 reals each, on the device) to this rank's
  // sums (to zero when `clear`; the potential too when `potential`).
  void accumulate(const Real* sources, Share s, bool clear, bool potential) {
    parallel_for(
        ctx_.device, mine_.count,
        Gravity<Real>{{body_.data(), sources, mine_.count, s.count, mine_.first, s.first, static_cast<Real>(p_.eps2()),
                       acc_.data(), phi_.data(), potential, clear, common_mass_ == 0}});
  }

  // The mass every body has (as Real, the kernels' precision), or 0 where
  // they differ. Where it is common the pairs leave it out (one
  // multiplication a pair fewer) and the kick and the potential energy
  // multiply by it once (mass_factor()). Collective.
  double common_mass(const HostParticles& bodies) const {
    double low = std::numeric_limits<double>::infinity(), high = -low;
    for (double m : bodies.mass) {
      const double r = static_cast<double>(static_cast<Real>(m));
      low = std::min(low, r);
      high = std::max(high, r);
    }
    low = ctx_.mpi.min(low);
    high = ctx_.mpi.max(high);
    return low == high && std::isfinite(low) && low > 0 ? low : 0;
  }
  // What the sums acc and phi are to be multiplied by besides G.
  double mass_factor() const { return common_mass_ != 0 ? common_mass_ : 1.0; }

  // acc and, when `potential`, phi (without the factor G) of this rank's
  // bodies, every source block in ascending order; the first launch starts
  // the sums from zero. Collective.
  void forces(bool potential) {
    auto t = ctx_.timers.scope("forces");
    bool clear = true;
    const auto add = [&](const Real* sources, Share s) {
      accumulate(sources, s, clear, potential);
      clear = false;
    };
    const int ranks = ctx_.mpi.size();
    // During set-up, pieces of about 2^26 pair interactions (a tenth of a
    // second or so) between looks for a signal; one rank otherwise sums all
    // its sources at once. Each body's sum runs over the sources in
    // ascending order either way, so the bits are the same.
    const std::int64_t piece =
        setting_up_ ? std::clamp<std::int64_t>((std::int64_t{1} << 26) / std::max<std::int64_t>(1, mine_.count), 64,
                                               kSourcePiece)
                    : (ranks == 1 ? std::max<std::int64_t>(n_, 1)
                                  : std::max(kSourcePiece, (mine_.count + kPiecesPerBlock - 1) / kPiecesPerBlock));
    if (ranks == 1) {
      for (std::int64_t first = 0; first < n_ && !(setting_up_ && stop_signal() != 0); first += piece)
        add(body_.data() + 4 * first, Share{first, std::min(piece, n_ - first)});
      return;
    }
    // Pipelined broadcasts: block s + 1 travels while block s is summed.
    MPI_Datatype body_type;
    MPI_Type_contiguous(4, std::is_same_v<Real, float> ? MPI_FLOAT : MPI_DOUBLE, &body_type);
    MPI_Type_commit(&body_type);
    // This rank's bodies leave from a host copy taken now, on a stream of
    // its own: on a GPU it overlaps the sums of the blocks before it.
    copies_.after_default();   // after the drift that moved them
    body_.copy_to_host(own_.data(), own_.size(), copies_);
    MPI_Request pending = MPI_REQUEST_NULL;
    const auto post = [&](int s) {
      const Share src = particles::even_share(n_, s, ranks);
      Real* buf = stage_[s % 2].data();
      if (s == ctx_.mpi.rank()) {
        copies_.fence();
        buf = own_.data();
      }
      MPI_Ibcast(buf, static_cast<int>(src.count), body_type, s, ctx_.mpi.comm(), &pending);
    };
    post(0);
    for (int s = 0; s < ranks; ++s) {
      MPI_Wait(&pending, MPI_STATUS_IGNORE);
      if (s + 1 < ranks) post(s + 1);
      const Share src = particles::even_share(n_, s, ranks);
      const Real* sources = body_.data();
      if (s != ctx_.mpi.rank()) {
        source_.copy_from_host(stage_[s % 2].data(), 4 * static_cast<std::size_t>(src.count));
        sources = source_.data();
      }
      // In pieces, ascending, with an MPI_Test between them: Open MPI moves
      // a non-blocking broadcast along only inside MPI calls.
      for (std::int64_t first = 0; first < src.count; first += piece) {
        const Share part{src.first + first, std::min(piece, src.count - first)};
        // During set-up a signal skips the sums (the broadcasts go on: every
        // rank must take part); the constructor then stops the run.
        if (!(setting_up_ && stop_signal() != 0)) add(sources + 4 * first, part);
        int done = 0;
        MPI_Test(&pending, &done, MPI_STATUS_IGNORE);
      }
    }
    MPI_Type_free(&body_type);
  }

  // `potential`: this step's diagnostics need phi.
  void kick_drift_kick(Real dt, bool potential) {
    const Device& dev = ctx_.device;
    const Real g_half_dt = static_cast<Real>(p_.G * mass_factor()) * (dt / Real(2));
    parallel_for(dev, mine_.count, kp::BodyKickDrift<Real>{body_.data(), vel_.data(), acc_.data(), g_half_dt, dt});
    forces(potential);
    parallel_for(dev, mine_.count, kp::BodyKick<Real>{vel_.data(), acc_.data(), g_half_dt});
  }

  // --- diagnostics and output -----------------------------------------------------
  // Exact tree sums over the body index (TreeSum), in double: the same bits
  // for any number of ranks.
  Diagnostics diagnostics() const {
    std::vector<Real> phi;
    const HostParticles h = download(&phi);
    constexpr int kWidth = 8;
    std::vector<double> blocks(h.size() * kWidth);
    for (std::size_t k = 0; k < h.size(); ++k) {
      const double m = h.mass[k];
      const double* x = h.position.data() + 3 * k;
      const double* v = h.velocity.data() + 3 * k;
      double* b = blocks.data() + kWidth * k;
      b[0] = 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
      b[1] = 0.5 * p_.G * mass_factor() * m * static_cast<double>(phi[k]);  // each pair counted from both ends
      for (int d = 0; d < 3; ++d) b[2 + d] = m * v[d];
      b[5] = m * (x[1] * v[2] - x[2] * v[1]);
      b[6] = m * (x[2] * v[0] - x[0] * v[2]);
      b[7] = m * (x[0] * v[1] - x[1] * v[0]);
    }
    const std::vector<double> s = tree_sum(ctx_.mpi, n_, mine_.first, blocks, kWidth);
    Diagnostics d;
    d.kinetic = s[0];
    d.potential = s[1];
    for (int k = 0; k < 3; ++k) {
      d.momentum[k] = s[2 + k];
      d.angular[k] = s[5 + k];
    }
    return d;
  }

  // Plummer in virial equilibrium exactly: velocities scaled so that
  // 2K = |W| with the softened W of the sampled positions.
  void virialize() {
    const Diagnostics d = diagnostics();
    if (d.kinetic <= 0) return;
    const double scale = std::sqrt(std::fabs(d.potential) / (2 * d.kinetic));
    HostParticles h = download();
    for (double& v : h.velocity) v *= scale;
    upload(h);
  }

  // Leapfrog is stable on an oscillation of frequency w only while
  // w dt < 2. The fastest a softened pair can swing is at its centre,
  // w^2 = G (m_i + m_j) / eps^3 (the curvature of -G m / sqrt(r^2 + eps^2)
  // at r = 0), so dt < 2 sqrt(eps^3 / (2 G m_max)) keeps every close pair
  // stable. A run past it (or with eps = 0, where w grows without bound as
  // a pair closes in) is not wrong as long as no pair gets that close, so
  // this warns rather than refuses; the energy error at the end says
  // whether it happened.
  void warn_about_the_step(const HostParticles& bodies) {
    if (n_ <= 2) return;   // a Kepler pair: its orbit, not a close encounter, sets the step
    double m_max = 0;
    for (double m : bodies.mass) m_max = std::max(m_max, m);
    m_max = ctx_.mpi.max(m_max);
    if (p_.softening == 0) {
      ctx_.out << format("warning: nbody.softening = 0: a close pair speeds up without bound and a fixed dt = %.6g "
                         "cannot follow it; expect large energy errors (dE/E below)\n",
                         p_.dt);
      return;
    }
    const double limit = 2 * std::sqrt(p_.eps2() * p_.softening / (2 * p_.G * m_max));
    if (p_.dt >= limit)
      ctx_.out << format("warning: nbody.dt = %.6g is above 2 sqrt(eps^3 / (2 G m_max)) = %.6g, the leapfrog's "
                         "stability limit for a pair closer than the softening %.6g; expect large energy errors if "
                         "one forms\n",
                         p_.dt, limit, p_.softening);
  }

  // A run whose energy moved by more than this fraction of itself did not
  // follow the dynamics (a resolved leapfrog run stays within ~(dt/t_dyn)^2,
  // far below): say so beside the result, in the console and the file.
  static constexpr double kDriftWarning = 0.1;

  // Collective (every rank holds the same row): a non-finite diagnostics row
  // fails the run, naming a body where one rank holds a broken one.
  void check_row(const Diagnostics& d) const {
    bool finite = std::isfinite(d.kinetic) && std::isfinite(d.potential);
    for (int k = 0; k < 3; ++k) finite = finite && std::isfinite(d.momentum[k]) && std::isfinite(d.angular[k]);
    if (finite) return;
    const std::string what = format("nbody: the diagnostics of step %lld are not finite (K = %g, W = %g)",
                                    static_cast<long long>(step_), d.kinetic, d.potential);
    const std::optional<std::string> body = nonfinite();
    ctx_.mpi.check_collective(body ? "rank " + std::to_string(ctx_.mpi.rank()) + ": " + what + ": " + *body
                                   : std::string(),
                              static_cast<int>(ExitCode::numerical), /*name_rank=*/false);
    throw Error(ExitCode::numerical, what, true);
  }

  // (E(t) - E(0)) / |E(0)|, one definition for the console, the stored
  // maximum (its absolute value) and scripts/plot/particles.py: a bound
  // system (E(0) < 0) whose energy rises shows a positive error.
  double energy_error(const Diagnostics& d) const {
    return initial_energy_ != 0 ? (d.total() - initial_energy_) / std::fabs(initial_energy_) : 0.0;
  }
  double relative_drift(const Diagnostics& d) const { return std::fabs(energy_error(d)); }

  void write_output(bool frame, bool diag) {
    // The potential of this step's positions (the steps between diagnostics
    // sum the accelerations alone; recomputing them gives the same bits).
    if (diag && phi_step_ != step_) {
      forces(true);
      phi_step_ = step_;
    }
    if (diag) {
      last_diag_step_ = step_;
      Diagnostics d;
      {
        auto t = ctx_.timers.scope("diagnostics");
        d = diagnostics();
      }
      if (step_ == 0) initial_energy_ = d.total();
      last_ = d;
      max_drift_ = std::max(max_drift_, relative_drift(d));
      auto t = ctx_.timers.scope("output");
      output_->observables(step_, time_, d.row());
      ctx_.out << format("step %9lld  t %-10.6g  E %-+.12e  K %-.6e  W %-+.6e  2K/|W| %-.6f  dE/|E0| %+.3e\n",
                         static_cast<long long>(step_), time_, d.total(), d.kinetic, d.potential, d.virial(),
                         energy_error(d));
      if (!failure_recorded_) check_row(d);
    }
    if (frame) {
      last_frame_step_ = step_;
      auto t = ctx_.timers.scope("output");
      output_->frame(step_, time_, download());
    }
  }

  RunContext& ctx_;
  Params p_;
  std::int64_t n_ = 0;
  Share mine_;
  Buffer<Real> body_, vel_, acc_, phi_, source_;
  std::vector<Real> stage_[2];   // host buffers of the pipelined broadcasts
  std::vector<Real> own_;        // this rank's bodies as broadcast to the others
  Stream copies_;
  std::unique_ptr<particles::H5mdOutput> output_;
  std::int64_t steps_ = 0, step_ = 0, steps_this_run_ = 0;
  std::int64_t fence_every_ = 1;   // steps between waits for the device (kQueuedPairs)
  std::int64_t phi_step_ = 0;      // the step whose positions phi was summed at
  double time_ = 0, step_seconds_ = 0, initial_energy_ = 0, max_drift_ = 0;
  Diagnostics last_;
  std::int64_t last_frame_step_ = -1, last_diag_step_ = -1;
  bool failure_recorded_ = false;
  bool setting_up_ = false;   // the constructor's forces: they look for a signal
  double common_mass_ = 0;    // every body's mass, left out of the pairs; 0: they differ (common_mass)
};

class NbodyModel final : public ModelOf<Params, read_params, declare_schema> {
 public:
  std::string_view name() const override { return "nbody"; }
  std::string_view summary() const override {
    return "gravitational N-body, all pairs, Plummer softening, kick-drift-kick leapfrog; bitwise the same on any "
           "number of ranks";
  }
  std::vector<CheckResult> self_checks(RunContext& ctx) const override;

 protected:
  void plan(const RunContext& ctx, const Params& p) const override {
    const std::int64_t n = initial_count(p.initial);
    ctx.out << format("plan: %s bodies (%s) over %d rank(s), about %s per rank; dt = %.6g, %lld steps to t = %.6g; "
                      "%.4g pair interactions per step; diagnostics every %lld steps, frames every %lld\n",
                      n < 0 ? "the file's" : std::to_string(n).c_str(), p.initial.kind.c_str(), ctx.mpi.size(),
                      n < 0 ? "N/ranks" : std::to_string((n + ctx.mpi.size() - 1) / ctx.mpi.size()).c_str(), p.dt,
                      static_cast<long long>(p.steps()), p.t_end(),
                      n < 0 ? 0.0 : static_cast<double>(n) * static_cast<double>(n - 1),
                      static_cast<long long>(p.diag_every), static_cast<long long>(p.output_every));
  }

  MemoryPlan memory(const RunContext& ctx, const Params& p) const override {
    const std::int64_t n = std::max<std::int64_t>(initial_count(p.initial), 0);
    const std::size_t ranks = static_cast<std::size_t>(ctx.mpi.size());
    const std::size_t local = (static_cast<std::size_t>(n) + ranks - 1) / ranks;
    const std::size_t real = ctx.precision == Precision::fp32 ? 4 : 8;
    // Device: body (x, y, z, m), velocity, acceleration, potential = 11
    // reals per body, plus one staged source block when several ranks.
    // Host: two broadcast stages and this rank's outgoing block, a HostParticles copy (8 doubles per body)
    // with the route buffers of output and checkpoints (2 x 8 doubles), the
    // diagnostics blocks (8 doubles); a file start: every rank reads all ids
    // to sort them (ids, order, rows: 3 int64 per body).
    return MemoryPlan::of(ctx.device, local * 11 * real + (ranks > 1 ? local * 4 * real : 0),
                          (ranks > 1 ? 3 * local * 4 * real : 0) + local * (8 + 16 + 8) * 8 +
                              (p.initial.kind == "file" ? static_cast<std::size_t>(n) * 3 * 8 : 0),
                          "use fewer bodies (nbody.n), more ranks, or FP32 (run.precision)");
  }

  std::unique_ptr<Simulation> start(RunContext& ctx, const Params& p) const override {
    return start_in_precision<NbodySimulation>(ctx, p);
  }
};

// One Kepler orbit (e = 0.5, 1000 steps): leapfrog's energy error stays
// bounded, max |dE/E| about 1e-4 (docs/validation.md), and the orbit
// closes.
std::vector<CheckResult> NbodyModel::self_checks(RunContext& ctx) const {
  Params p;
  p.initial.kind = "two_body";
  p.initial.eccentricity = 0.5;
  p.softening = 0;
  const double period = 2 * std::numbers::pi;   // a = G = M = 1
  p.dt = period / 1000;
  p.steps_key = 1000;
  p.diag_every = 1;
  p.output_every = 0;
  std::ostringstream sink;
  RunContext silent{ctx.mpi, ctx.config, ctx.device, ctx.precision, ctx.timers, nullptr, sink, false};
  std::unique_ptr<Simulation> sim = start_in_precision<NbodySimulation>(silent, p);
  while (sim->steps_done() < sim->steps()) sim->advance();
  const Performance perf = sim->finish();
  double drift = 0;
  for (const auto& f : perf.figures)
    if (f.name == "max_relative_energy_error") drift = f.value;
  return {CheckResult::within("nbody Kepler e=0.5, 1000 steps/orbit: max |dE/E|", drift, 0,
                              ctx.precision == Precision::fp32 ? 1e-3 : 2e-4,
                              "leapfrog, second order: bounded energy error of about 1e-4 at 1000 steps per orbit")};
}

}  // namespace
}  // namespace strata::nbody

using NbodyModel = strata::nbody::NbodyModel;
STRATA_REGISTER_MODEL(NbodyModel);
