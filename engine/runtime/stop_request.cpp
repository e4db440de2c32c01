#include "engine/runtime/stop_request.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>

namespace strata {
namespace {

volatile sig_atomic_t g_signal = 0;
// When the first request arrived, CLOCK_MONOTONIC nanoseconds (the clock
// std::chrono::steady_clock reads on Linux). Written before g_signal is
// set; a lock-free atomic, so the handler may write it.
std::atomic<std::int64_t> g_arrival_ns{0};
static_assert(std::atomic<std::int64_t>::is_always_lock_free);

std::int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);   // async-signal-safe (POSIX)
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}
// The process that launched this rank (mpirun, orted, slurmstepd), or 0
// when strata runs alone. When it dies (kill -9 of mpirun) the rank is
// re-parented; it stops at the next step boundary as on a signal, rather
// than computing on for a job nobody waits for.
pid_t g_launcher = 0;

// Set by the launchers strata is run under (Open MPI, PMIx, Slurm's srun).
bool under_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "SLURM_STEP_ID"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

void on_stop_signal(int sig) {
  // Only async-signal-safe work here: remember the first signal and when.
  if (g_signal != 0) return;
  g_arrival_ns.store(monotonic_ns());
  g_signal = sig;
}

// Static initialisation runs before main, close enough to the job's start.
const auto g_start = std::chrono::steady_clock::now();

}  // namespace

void install_stop_handlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  if (under_launcher()) g_launcher = getppid();
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;   // file and MPI calls in flight carry on
  for (int sig : {SIGTERM, SIGINT, SIGUSR1}) sigaction(sig, &sa, nullptr);
}

int stop_signal() {
  if (g_signal == 0 && g_launcher != 0 && getppid() != g_launcher) {
    g_arrival_ns.store(monotonic_ns());
    g_signal = kLauncherGone;
  }
  return g_signal;
}

double seconds_since_stop_request() {
  if (stop_signal() == 0) return 0.0;
  return 1e-9 * static_cast<double>(monotonic_ns() - g_arrival_ns.load());
}

double process_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case kLauncherGone: return "the loss of its launcher (mpirun or srun exited)";
    default: return "a signal";
  }
}

Error stopped_during_setup(const std::string& phase) {
  const int sig = stop_signal();
  return Error(ExitCode::stopped,
               std::string(signal_name(sig)) + " during " + phase +
                   ", before the first step: nothing computed and no checkpoint to continue from (start afresh "
                   "with --overwrite)",
               true);
}

}  // namespace strata
