#include "engine/runtime/step_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "engine/config/config.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/runtime/device_health.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/progress.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/stop_request.hpp"
#include "engine/runtime/timers.hpp"

namespace strata {
namespace {

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// A test switch from the environment: unset -> nothing; malformed -> an error.
std::optional<std::string> test_switch(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// Collective: throws the same NumericalError on every rank when any rank
// found a non-finite value; the lowest such rank's description wins.
void check_health(const MpiContext& mpi, const Simulation& sim, std::int64_t step) {
  const std::optional<std::string> bad = sim.nonfinite();
  std::string message;
  if (bad) message = *bad + " at step " + std::to_string(step) + " on rank " + std::to_string(mpi.rank());
  mpi.check_collective(message, static_cast<int>(ExitCode::numerical), /*name_rank=*/false);
}

// "HH:MM:SS" or "D-HH:MM:SS" -> seconds; "0" -> 0. Throws InputError(what).
double parse_walltime(const std::string& text, const std::string& what) {
  if (text == "0") return 0;
  // [D-]HH:MM:SS
  std::string rest = text;
  long days = 0;
  if (const auto dash = rest.find('-'); dash != std::string::npos) {
    const std::string d = rest.substr(0, dash);
    if (!all_digits(d) || d.size() > 3) throw InputError(what + ": expected HH:MM:SS or D-HH:MM:SS");
    days = std::stol(d);
    rest = rest.substr(dash + 1);
  }
  const auto c1 = rest.find(':'), c2 = rest.rfind(':');
  if (c1 == std::string::npos || c1 == c2) throw InputError(what + ": expected HH:MM:SS or D-HH:MM:SS");
  const std::string h = rest.substr(0, c1), m = rest.substr(c1 + 1, c2 - c1 - 1), s = rest.substr(c2 + 1);
  if (!all_digits(h) || !all_digits(m) || !all_digits(s) || h.size() > 4 || m.size() != 2 || s.size() != 2 ||
      std::stol(m) > 59 || std::stol(s) > 59) {
    throw InputError(what + ": expected HH:MM:SS or D-HH:MM:SS (minutes and seconds below 60)");
  }
  const double seconds = static_cast<double>(((days * 24 + std::stol(h)) * 60 + std::stol(m)) * 60 + std::stol(s));
  if (seconds <= 0) throw InputError(what + ": must be positive (\"0\" means no limit)");
  return seconds;
}

}  // namespace

LoopSettings LoopSettings::from(const Config& c, const std::string& max_walltime_option) {
  LoopSettings s;
  s.checkpoint_every_steps = c.integer("checkpoint.every_steps");
  s.checkpoint_every_seconds = c.real("checkpoint.every_seconds");
  s.keep = static_cast<int>(c.integer("checkpoint.keep"));
  s.health_every_steps = c.integer("health.every_steps");
  s.device_every_seconds = c.real("health.device_every_seconds");
  if (!max_walltime_option.empty()) {
    s.max_walltime = parse_walltime(max_walltime_option, "--max-walltime " + max_walltime_option);
  } else {
    try {
      s.max_walltime = parse_walltime(c.string("checkpoint.max_walltime"), "checkpoint.max_walltime");
    } catch (const InputError& e) {
      const std::string why = e.what();
      c.fail("checkpoint.max_walltime", why.substr(why.find(": ") + 2));
    }
  }
  if (auto v = test_switch("STRATA_TEST_STEP_DELAY_MS")) {
    if (!all_digits(*v) || v->size() > 7) throw InputError("STRATA_TEST_STEP_DELAY_MS=" + *v + ": expected milliseconds");
    s.step_delay_seconds = std::stod(*v) / 1000.0;
  }
  if (auto v = test_switch("STRATA_TEST_INJECT_NAN")) {
    const auto colon = v->find(':');
    const std::string step = v->substr(0, colon), rank = colon == std::string::npos ? "0" : v->substr(colon + 1);
    if (!all_digits(step) || !all_digits(rank) || step.size() > 15 || rank.size() > 6) {
      throw InputError("STRATA_TEST_INJECT_NAN=" + *v + ": expected STEP or STEP:RANK");
    }
    s.inject_nan_step = std::stoll(step);
    s.inject_nan_rank = std::stoi(rank);
  }
  return s;
}

LoopResult run_steps(Simulation& sim, RunContext& ctx, CheckpointStore& store, CheckpointHeader header,
                     const LoopSettings& s) {
  const MpiContext& mpi = ctx.mpi;
  LoopResult result;
  const double start = process_seconds();
  const double prior_seconds = header.wall_seconds;
  double last_checkpoint = start, step_cost = 0, checkpoint_cost = 0;

  const auto write_checkpoint = [&] {
    // The output in flight goes first: HDF5 is one thread's at a time.
    sim.flush_output();
    // Then the output file reaches the disk, metadata included, before the
    // checkpoint that counts its frames exists: after a hard kill, every
    // frame a checkpoint counts is in the file (a restart drops the later ones).
    if (ctx.output != nullptr) ctx.output->flush();
    // Never store a state that is already broken.
    check_health(mpi, sim, sim.steps_done());
    auto t = ctx.timers.scope("checkpoint");
    const double t0 = process_seconds();
    header.step = sim.steps_done();
    header.steps = sim.steps();
    header.wall_seconds = prior_seconds + (t0 - start);
    result.checkpoint = store.write(sim, header, s.keep);
    ++result.checkpoints;
    last_checkpoint = process_seconds();
    checkpoint_cost = mpi.max(last_checkpoint - t0);
  };

  Progress progress(mpi.root(), header.model, sim.work_total(), sim.work_unit());
  // A stop asked for during the set-up (an initial state, a first frame) is
  // honoured before the first step rather than after it: the state as set
  // up is a checkpoint like any other.
  if (sim.steps_done() < sim.steps()) {
    int sig = stop_signal();
    MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, mpi.comm());
    if (sig != 0) {
      write_checkpoint();
      result.stopped = true;
      result.reason = signal_name(sig);
      return result;
    }
  }
  while (sim.steps_done() < sim.steps()) {
    const double t0 = process_seconds();
    {
      auto t = ctx.timers.scope("compute");
      sim.advance();
    }
    if (s.step_delay_seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s.step_delay_seconds));
    const std::int64_t done = sim.steps_done();
    if (done == s.inject_nan_step && mpi.rank() == s.inject_nan_rank) sim.inject_nonfinite();
    if (s.health_every_steps > 0 && done % s.health_every_steps == 0) check_health(mpi, sim, done);

    // One all-reduce a step: [signal, wall-time stop, seconds cadence, slowest
    // step, device health events (DeviceHealth's bits)].
    double flags[5] = {static_cast<double>(stop_signal()), 0, 0, process_seconds() - t0,
                       static_cast<double>(ctx.health != nullptr ? ctx.health->take_events() : 0)};
    if (mpi.root()) {
      const double now = process_seconds();
      // Stop while the next step and a checkpoint still fit, with a margin
      // from what they measured (before the first checkpoint, a step's time).
      const double checkpoint_estimate = result.checkpoints > 0 ? checkpoint_cost : std::max(1.0, step_cost);
      if (s.max_walltime > 0 && now + step_cost + 1.5 * checkpoint_estimate + 1.0 >= s.max_walltime) flags[1] = 1;
      if (s.checkpoint_every_seconds > 0 && now - last_checkpoint >= s.checkpoint_every_seconds) flags[2] = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, flags, 5, MPI_DOUBLE, MPI_MAX, mpi.comm());
    step_cost = flags[3];
    if (flags[4] != 0) progress.warn(DeviceHealth::describe(static_cast<int>(flags[4])));
    progress.update(sim.work_done());

    if (done >= sim.steps()) break;   // the run is complete: nothing to save or stop for
    const bool stop = flags[0] != 0 || flags[1] != 0;
    const bool cadence = flags[2] != 0 || (s.checkpoint_every_steps > 0 && done % s.checkpoint_every_steps == 0);
    // A checkpoint that fails (a full disk) fails the run, on every rank
    // (exit 4), with the checkpoints before it untouched. Going on would
    // compute with nothing to fall back on, on the file system that also
    // takes the output (checkpoints live beside it), whose next frame would
    // most likely fail too; stopping now loses at most one checkpoint
    // interval and says what to free.
    if (stop || cadence) write_checkpoint();
    if (stop) {
      result.stopped = true;
      result.reason = flags[0] != 0 ? signal_name(static_cast<int>(flags[0])) : "the wall-time limit";
      return result;
    }
  }
  progress.finish();
  sim.flush_output();
  check_health(mpi, sim, sim.steps_done());
  return result;
}

}  // namespace strata
