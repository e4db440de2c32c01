// Requests to stop: SIGTERM, SIGINT and SIGUSR1 (what Slurm's --signal and
// a preemption send) only set a flag here; the step loop all-reduces it at
// the next step boundary, so every rank checkpoints at the same step and
// exits 75. A handler that only sets a flag also means a second signal
// during a checkpoint changes nothing: the checkpoint still completes.
#pragma once

#include <string>

#include "engine/runtime/error.hpp"

namespace strata {

// Installs the handlers (idempotent). Called by `run` and `sweep`.
void install_stop_handlers();
// What stop_signal() says when the launcher of this rank (mpirun, srun's
// step daemon) has exited: above every signal number, so an all-reduce
// with MPI_MAX keeps it.
constexpr int kLauncherGone = 1000;
// The signal that asked this process to stop, kLauncherGone, or 0.
int stop_signal();
// Seconds since that request reached this process (the handler notes the
// time); 0 when there is none.
double seconds_since_stop_request();
// Seconds since the process started (the job's wall clock, as far as this
// process can tell), for checkpoint.max_walltime.
double process_seconds();
// "SIGTERM", "SIGUSR1", ...
const char* signal_name(int sig);

// Set-up before the first step (initial states, scans over every cell, the
// dry run's plan) has no step boundary and nothing to checkpoint, so a
// signal there ends the run at once: long set-up loops poll stop_signal()
// (one load, cheap enough once a row), leave the loop when it is set, agree
// with the other ranks (MpiContext::any) at their next collective call, and
// throw this on every rank: exit 75 ("stopped"), nothing to restart from,
// so the next start is a fresh one.
Error stopped_during_setup(const std::string& phase);

}  // namespace strata
