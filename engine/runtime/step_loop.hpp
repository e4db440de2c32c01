// The one step loop of every model: it advances a Simulation and, at each
// step boundary, agrees across ranks (one all-reduce) on whether a signal or
// the wall-time limit asks to stop, whether a checkpoint is due, and whether
// any rank's state went non-finite. Models never see signals or files.
#pragma once

#include <cstdint>
#include <string>

#include "engine/io/checkpoint.hpp"

namespace strata {

class Config;
class Simulation;
struct RunContext;

struct LoopSettings {
  std::int64_t checkpoint_every_steps = 0;   // 0: off
  double checkpoint_every_seconds = 0;       // 0: off
  int keep = 2;
  double max_walltime = 0;                   // seconds since process start; 0: none
  std::int64_t health_every_steps = 100;     // 0: only at the end
  double device_every_seconds = 10;          // NVML sampler cadence (DeviceHealth); 0: off
  // Test-only switches, from the environment (STRATA_TEST_STEP_DELAY_MS,
  // STRATA_TEST_INJECT_NAN=STEP[:RANK]): slow each step down so a test can
  // signal a run mid-way on any machine; put a NaN into one rank's state.
  double step_delay_seconds = 0;
  std::int64_t inject_nan_step = -1;
  int inject_nan_rank = 0;

  // From [checkpoint], [health] and --max-walltime (which wins when given).
  // Throws InputError naming the key or the option.
  static LoopSettings from(const Config& c, const std::string& max_walltime_option);
};

struct LoopResult {
  bool stopped = false;        // stopped early after writing `checkpoint`
  std::string reason;          // "SIGTERM", "the wall-time limit"
  std::string checkpoint;      // the last checkpoint written, if any
  int checkpoints = 0;         // written by this process
};

// Runs `sim` to its last step or to a stop. `header` describes the run for
// the checkpoints (step fields are filled in here). Throws NumericalError
// (collective) naming the rank and step when the health check fails.
LoopResult run_steps(Simulation& sim, RunContext& ctx, CheckpointStore& store, CheckpointHeader header,
                     const LoopSettings& settings);

}  // namespace strata
