// Requests to stop: SIGTERM, SIGINT and SIGUSR1 (what Slurm's --signal and
// a preemption send) only set a flag here; the step loop all-reduces it at
// the next step boundary, so every rank checkpoints at the same step and
// exits 75. A handler that only sets a flag also means a second signal
// during a checkpoint changes nothing: the checkpoint still completes.
#pragma once

namespace strata {

// Installs the handlers (idempotent). Called by `run` and `sweep`.
void install_stop_handlers();
// What stop_signal() says when the launcher of this rank (mpirun, srun's
// step daemon) has exited: above every signal number, so an all-reduce
// with MPI_MAX keeps it.
constexpr int kLauncherGone = 1000;
// The signal that asked this process to stop, kLauncherGone, or 0.
int stop_signal();
// Seconds since the process started (the job's wall clock, as far as this
// process can tell), for checkpoint.max_walltime.
double process_seconds();
// "SIGTERM", "SIGUSR1", ...
const char* signal_name(int sig);

}  // namespace strata
