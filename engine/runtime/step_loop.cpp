#include "engine/runtime/step_loop.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <ostream>
#include <thread>
#include <vector>

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
#include "engine/runtime/watchdog.hpp"

namespace strata {
namespace {

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// A test switch from the environment: unset -> nothing; malformed -> an error.
std::optional<std::string> test_switch(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// "STEP" of a test switch: a step number, or `setup` where allowed.
std::optional<std::int64_t> switch_step(const std::string& text, bool setup_allowed) {
  if (setup_allowed && text == "setup") return LoopSettings::kSetUp;
  if (!all_digits(text) || text.size() > 15) return std::nullopt;
  return std::stoll(text);
}

// "RANK" of a test switch: absent -> 0; not a rank of `ranks` -> nullopt.
std::optional<int> switch_rank(const std::string& text, int ranks) {
  if (!all_digits(text) || text.size() > 6) return std::nullopt;
  const int rank = std::stoi(text);
  if (rank >= ranks) return std::nullopt;
  return rank;
}

// The stop signals strata handles (stop_request.hpp), by name with or
// without "SIG"; 0 for any other (raising one would kill the process).
int stop_signal_named(std::string name) {
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  if (name == "TERM") return SIGTERM;
  if (name == "INT") return SIGINT;
  if (name == "USR1") return SIGUSR1;
  return 0;
}

std::vector<std::string> split_colons(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {
    const auto colon = text.find(':', begin);
    parts.push_back(text.substr(begin, colon - begin));
    if (colon == std::string::npos) return parts;
    begin = colon + 1;
  }
}

void read_test_switches(LoopSettings& s, int ranks) {
  if (auto v = test_switch("STRATA_TEST_STEP_DELAY_MS")) {
    if (!all_digits(*v) || v->size() > 7) throw InputError("STRATA_TEST_STEP_DELAY_MS=" + *v + ": expected milliseconds");
    s.step_delay_seconds = std::stod(*v) / 1000.0;
  }
  if (auto v = test_switch("STRATA_TEST_INJECT_NAN")) {
    const std::vector<std::string> part = split_colons(*v);
    const auto step = switch_step(part[0], false);
    const auto rank = part.size() == 2 ? switch_rank(part[1], ranks) : std::optional<int>(0);
    if (part.size() > 2 || !step || !rank) {
      throw InputError("STRATA_TEST_INJECT_NAN=" + *v + ": expected STEP or STEP:RANK (a rank below " +
                       std::to_string(ranks) + ")");
    }
    s.inject_nan_step = *step;
    s.inject_nan_rank = *rank;
  }
  if (auto v = test_switch("STRATA_TEST_SIGNAL_AT")) {
    const std::vector<std::string> part = split_colons(*v);
    const auto step = switch_step(part[0], true);
    const int sig = part.size() >= 2 ? stop_signal_named(part[1]) : 0;
    const auto rank = part.size() == 3 ? switch_rank(part[2], ranks) : std::optional<int>(0);
    if (part.size() < 2 || part.size() > 3 || !step || sig == 0 || !rank) {
      throw InputError("STRATA_TEST_SIGNAL_AT=" + *v +
                       ": expected STEP:SIGNAL or STEP:SIGNAL:RANK (STEP a number or `setup`, SIGNAL one of TERM, "
                       "INT, USR1, RANK below " + std::to_string(ranks) + ")");
    }
    s.signal_step = *step;
    s.signal_number = sig;
    s.signal_rank = *rank;
  }
  if (auto v = test_switch("STRATA_TEST_HANG_AT")) {
    const std::vector<std::string> part = split_colons(*v);
    const auto step = switch_step(part[0], false);
    const auto rank = part.size() == 2 ? switch_rank(part[1], ranks) : std::optional<int>(0);
    if (part.size() > 2 || !step || *step < 1 || !rank) {
      throw InputError("STRATA_TEST_HANG_AT=" + *v + ": expected STEP or STEP:RANK (STEP from 1, a rank below " +
                       std::to_string(ranks) + ")");
    }
    s.hang_step = *step;
    s.hang_rank = *rank;
  }
  if (auto v = test_switch("STRATA_TEST_CHECKPOINT_DELAY_MS")) {
    if (!all_digits(*v) || v->size() > 7) {
      throw InputError("STRATA_TEST_CHECKPOINT_DELAY_MS=" + *v + ": expected milliseconds");
    }
    s.checkpoint_delay_seconds = std::stod(*v) / 1000.0;
  }
  if (auto v = test_switch("STRATA_TEST_HOLD_AT")) {
    const auto step = switch_step(*v, true);
    if (!step) throw InputError("STRATA_TEST_HOLD_AT=" + *v + ": expected a step number or `setup`");
    s.hold_step = *step;
  }
}

// Collective: waits until some rank has a request to stop (a signal, or
// its launcher gone), polling every 10 ms; returns it (the highest).
// A hold is no hang: the watchdog watches each all-reduce, not the wait.
int wait_for_stop_request(const MpiContext& mpi) {
  const watchdog::PhaseScope held(watchdog::Phase::idle);
  for (;;) {
    int sig = stop_signal();
    {
      const watchdog::PhaseScope phase(watchdog::Phase::stop_flag);
      MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, mpi.comm());
    }
    if (sig != 0) return sig;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void announce_hold(std::ostream& out, const std::string& where) {
  out << "STRATA_TEST_HOLD_AT: holding " << where << " until a stop request (a signal)" << std::endl;
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

LoopSettings LoopSettings::from(const Config& c, const std::string& max_walltime_option, int ranks) {
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
  read_test_switches(s, ranks);
  return s;
}

void test_switches_before_setup(const LoopSettings& s, const MpiContext& mpi, std::ostream& out) {
  if (s.signal_step == LoopSettings::kSetUp && mpi.rank() == s.signal_rank) std::raise(s.signal_number);
  if (s.hold_step == LoopSettings::kSetUp) {
    announce_hold(out, "before the set-up");
    wait_for_stop_request(mpi);
  }
}

LoopResult run_steps(Simulation& sim, RunContext& ctx, CheckpointStore& store, CheckpointHeader header,
                     const LoopSettings& s) {
  const MpiContext& mpi = ctx.mpi;
  LoopResult result;
  const double start = process_seconds();
  const double prior_seconds = header.wall_seconds;
  double last_checkpoint = start, step_cost = 0, checkpoint_cost = 0;

  const auto write_checkpoint = [&] {
    const watchdog::PhaseScope phase(watchdog::Phase::checkpoint);
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
    if (s.checkpoint_delay_seconds > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(s.checkpoint_delay_seconds));
    result.checkpoint = store.write(sim, header, s.keep);
    watchdog::note_checkpoint(result.checkpoint);
    ++result.checkpoints;
    last_checkpoint = process_seconds();
    checkpoint_cost = mpi.max(last_checkpoint - t0);
  };

  // A stop: the checkpoint (unless one of this step was just written), and
  // how long the request waited for it, on the rank that had it first.
  const auto stop_with = [&](const std::string& reason, bool checkpointed) {
    if (!checkpointed) write_checkpoint();
    result.stopped = true;
    result.reason = reason;
    result.answer_seconds = mpi.max(seconds_since_stop_request());
    return result;
  };

  Progress progress(mpi.root(), header.model, sim.work_total(), sim.work_unit());
  watchdog::set_step(sim.steps_done());
  // A stop asked for during the set-up (an initial state, a first frame) is
  // honoured before the first step rather than after it: the state as set
  // up is a checkpoint like any other.
  if (sim.steps_done() < sim.steps()) {
    if (sim.steps_done() == 0 && !ctx.restarting) {
      if (s.signal_step == 0 && mpi.rank() == s.signal_rank) std::raise(s.signal_number);
      if (s.hold_step == 0) {
        announce_hold(ctx.out, "after the set-up, before the first step");
        wait_for_stop_request(mpi);
      }
    }
    int sig = stop_signal();
    {
      const watchdog::PhaseScope phase(watchdog::Phase::stop_flag);
      MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, mpi.comm());
    }
    if (sig != 0) return stop_with(signal_name(sig), false);
  }
  while (sim.steps_done() < sim.steps()) {
    const double t0 = process_seconds();
    watchdog::set_step(sim.steps_done() + 1);
    const watchdog::PhaseScope step_phase(watchdog::Phase::step);
    // The test's signal arrives as the step starts, so it waits through the
    // whole step, as a real one landing mid-step does.
    if (sim.steps_done() + 1 == s.signal_step && mpi.rank() == s.signal_rank) std::raise(s.signal_number);
    if (sim.steps_done() + 1 == s.hang_step && mpi.rank() == s.hang_rank) std::raise(SIGSTOP);
    {
      auto t = ctx.timers.scope("compute");
      sim.advance();
    }
    if (s.step_delay_seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s.step_delay_seconds));
    const std::int64_t done = sim.steps_done();
    if (done == s.inject_nan_step && mpi.rank() == s.inject_nan_rank) sim.inject_nonfinite();
    if (s.health_every_steps > 0 && done % s.health_every_steps == 0) check_health(mpi, sim, done);

    // One all-reduce a step: [signal, wall-time stop, seconds cadence, slowest
    // step, then one flag per device health event (DeviceHealth's bits)].
    constexpr int kFlags = 4 + static_cast<int>(std::size(kHealthEvents));
    const int events = ctx.health != nullptr ? ctx.health->take_events() : 0;
    double flags[kFlags] = {static_cast<double>(stop_signal()), 0, 0, process_seconds() - t0};
    for (std::size_t e = 0; e < std::size(kHealthEvents); ++e) flags[4 + e] = (events & kHealthEvents[e]) != 0 ? 1.0 : 0.0;
    if (mpi.root()) {
      const double now = process_seconds();
      // Stop while the next step and a checkpoint still fit, with a margin
      // from what they measured (before the first checkpoint, a step's time).
      const double checkpoint_estimate = result.checkpoints > 0 ? checkpoint_cost : std::max(1.0, step_cost);
      if (s.max_walltime > 0 && now + step_cost + 1.5 * checkpoint_estimate + 1.0 >= s.max_walltime) flags[1] = 1;
      if (s.checkpoint_every_seconds > 0 && now - last_checkpoint >= s.checkpoint_every_seconds) flags[2] = 1;
    }
    {
      const watchdog::PhaseScope phase(watchdog::Phase::stop_flag);
      MPI_Allreduce(MPI_IN_PLACE, flags, kFlags, MPI_DOUBLE, MPI_MAX, mpi.comm());
    }
    step_cost = flags[3];
    watchdog::step_seconds(step_cost);
    int any_events = 0;
    for (std::size_t e = 0; e < std::size(kHealthEvents); ++e) any_events |= flags[4 + e] != 0 ? kHealthEvents[e] : 0;
    for (const std::string& warning : DeviceHealth::describe(any_events)) progress.warn(warning);
    progress.update(sim.work_done(), sim.work_fraction());

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
    if (stop) return stop_with(flags[0] != 0 ? signal_name(static_cast<int>(flags[0])) : "the wall-time limit", true);
    if (done == s.hold_step) {
      announce_hold(ctx.out, "after step " + std::to_string(done));
      return stop_with(signal_name(wait_for_stop_request(mpi)), cadence);
    }
  }
  progress.finish();
  sim.flush_output();
  check_health(mpi, sim, sim.steps_done());
  return result;
}

}  // namespace strata
