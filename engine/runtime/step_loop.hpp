// The one step loop of every model: it advances a Simulation and, at each
// step boundary, agrees across ranks (one all-reduce) on whether a signal or
// the wall-time limit asks to stop, whether a checkpoint is due, and whether
// any rank's state went non-finite. Models never see signals or files.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "engine/io/checkpoint.hpp"

namespace strata {

class Config;
class MpiContext;
class Simulation;
struct RunContext;

struct LoopSettings {
  std::int64_t checkpoint_every_steps = 0;   // 0: off
  double checkpoint_every_seconds = 0;       // 0: off
  int keep = 2;
  double max_walltime = 0;                   // seconds since process start; 0: none
  std::int64_t health_every_steps = 100;     // 0: only at the end
  double device_every_seconds = 10;          // NVML sampler cadence (DeviceHealth); 0: off
  // Test-only switches, from the environment (docs/faults.md), so that a
  // test's outcome never depends on how fast the machine computes:
  //   STRATA_TEST_STEP_DELAY_MS: sleep after each step (a slow machine);
  //   STRATA_TEST_INJECT_NAN=STEP[:RANK]: a NaN in one rank's state after STEP;
  //   STRATA_TEST_SIGNAL_AT=STEP:SIGNAL[:RANK]: rank RANK raises SIGNAL (TERM,
  //     INT or USR1) in its own process as step STEP starts, so the real
  //     handler, all-reduce and checkpoint answer it at the end of step STEP;
  //     STEP 0: after the set-up, before the first step; `setup`: as the
  //     model's set-up starts;
  //   STRATA_TEST_HOLD_AT=STEP: after step STEP (and the checkpoint due there)
  //     every rank waits for a stop request (a real signal from outside, or
  //     the loss of the launcher), then checkpoints there and stops: a run
  //     signalled from outside can never finish first; `setup`: wait before
  //     the model's set-up, which then meets the request.
  //   STRATA_TEST_HANG_AT=STEP[:RANK]: rank RANK stops its own process
  //     (SIGSTOP) as step STEP starts: a hung peer, for the watchdog;
  //   STRATA_TEST_CHECKPOINT_DELAY_MS: sleep inside each checkpoint write
  //     (a slow file system: a long phase that is no hang).
  static constexpr std::int64_t kNever = -1;
  static constexpr std::int64_t kSetUp = -2;
  double step_delay_seconds = 0;
  std::int64_t inject_nan_step = kNever;
  int inject_nan_rank = 0;
  std::int64_t signal_step = kNever;
  int signal_number = 0;
  int signal_rank = 0;
  std::int64_t hold_step = kNever;
  std::int64_t hang_step = kNever;
  int hang_rank = 0;
  double checkpoint_delay_seconds = 0;

  // From [checkpoint], [health] and --max-walltime (which wins when given),
  // and the test switches. Throws InputError naming the key, the option or
  // the variable (a malformed switch, or one naming no rank of `ranks`).
  static LoopSettings from(const Config& c, const std::string& max_walltime_option, int ranks);
};

struct LoopResult {
  bool stopped = false;        // stopped early after writing `checkpoint`
  std::string reason;          // "SIGTERM", "the wall-time limit"
  std::string checkpoint;      // the last checkpoint written, if any
  int checkpoints = 0;         // written by this process
  // Stopped on a signal: seconds from its arrival (on the rank that had it
  // first) to the checkpoint written, the margin a job's --signal must give.
  double answer_seconds = 0;
};

// Where the test switches act outside the step loop: as the model's set-up
// starts (`setup`). Collective.
void test_switches_before_setup(const LoopSettings& settings, const MpiContext& mpi, std::ostream& out);

// Runs `sim` to its last step or to a stop. `header` describes the run for
// the checkpoints (step fields are filled in here). Throws NumericalError
// (collective) naming the rank and step when the health check fails.
LoopResult run_steps(Simulation& sim, RunContext& ctx, CheckpointStore& store, CheckpointHeader header,
                     const LoopSettings& settings);

}  // namespace strata
