// A watchdog for a peer that stopped answering: a cut network link, a hung
// or stopped process. MPI waits for such a peer for ever (every rank sits in
// a halo receive or a collective), which under a batch system burns the
// whole allocation. The main thread names what it is doing in a phase
// record (a few atomic stores); a monitor thread per process compares the
// time spent in the current phase with its allowance and, past it, prints
// one line naming the rank, the phase and the peer waited for, removes the
// temporary checkpoint being written, and ends the process at once with
// exit 76, without MPI (which cannot be trusted then). docs/faults.md
// states the policy.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace strata::watchdog {

// What the main thread is doing. Phases of a step are timed against the
// step allowance; the others against the floor alone.
enum class Phase : int {
  idle,        // not watched: no run, or a test's hold between collectives
  setup,       // resolving the input, opening files, the model's set-up, a restart's read
  step,        // step N's computation (a collective inside it included)
  halo,        // step N's halo exchange with a neighbour
  stop_flag,   // the all-reduce of the stop flag after step N
  output,      // writing an output frame or diagnostics row (or waiting for the writer)
  checkpoint,  // writing a checkpoint
  finish,      // the run's last results and file
};

// The peer of a phase that waits for every rank (a collective).
constexpr int kAllRanks = -1;
// Steps whose time makes the step allowance, and its factor over the
// slowest of them.
constexpr int kRecentSteps = 16;
constexpr double kStepFactor = 30.0;
// The set-up's allowance over the floor: it reads inputs and restarts and
// makes the first connections between ranks (slow on a busy cluster)
// before anything is known of the run's pace.
constexpr double kSetupFactor = 10.0;

struct Settings {
  double floor_seconds = 300;  // run.watchdog_floor; 0: no watchdog
  int rank = 0;
  std::string restart_hint;  // how to continue from a checkpoint ("continue with: ...")
  std::string fresh_hint;    // how to start again when there is none yet
};

// Sets the current phase of this process's main thread for its lifetime
// and puts the outer one back after. A no-op on any other thread and
// while no Watchdog runs.
class PhaseScope {
 public:
  explicit PhaseScope(Phase phase, int peer = kAllRanks);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  bool active_ = false;
  int phase_ = 0, peer_ = kAllRanks;  // the outer phase, put back after
};

// The neighbour a halo wait now waits for (main thread; cheap).
void set_peer(int rank);
// The step being computed (1 for the first of a fresh run).
void set_step(std::int64_t step);
// A finished step's wall time (the slowest rank's): the step allowance is
// kStepFactor x the slowest of the last kRecentSteps, at least the floor.
void step_seconds(double seconds);
// The newest valid checkpoint, written or restarted from: the watchdog's
// message then says to continue from it.
void note_checkpoint(const std::string& path);

// A file to remove if the watchdog ends the process while it exists (a
// checkpoint being written under its temporary name).
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path);
  ~TemporaryFile();
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
};

// The monitor of one run, started by the main thread (whose phases it
// watches) and stopped, joined, by its destructor. Nothing of it touches
// the run's results.
class Watchdog {
 public:
  explicit Watchdog(Settings settings);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void monitor();
  Settings settings_;
  std::mutex mutex_;
  std::condition_variable stopping_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace strata::watchdog
