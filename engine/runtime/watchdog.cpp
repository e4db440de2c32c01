#include "engine/runtime/watchdog.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "engine/runtime/error.hpp"

namespace strata::watchdog {
namespace {

// The main thread's phase record. Only the thread that started the
// Watchdog writes it; the version is odd while it does, so the monitor
// skips a record caught half-written (and looks again a tick later).
std::atomic<bool> g_running{false};
thread_local bool t_watched = false;
std::atomic<std::uint64_t> g_version{0};
std::atomic<int> g_phase{static_cast<int>(Phase::idle)};
std::atomic<int> g_peer{kAllRanks};
std::atomic<std::int64_t> g_step{0};
std::atomic<std::int64_t> g_since_ns{0};
// The slowest of the recent steps, seconds (the ring is the main thread's).
std::atomic<double> g_recent_max{0};
double g_recent[kRecentSteps] = {};
int g_recent_next = 0;
static_assert(std::atomic<double>::is_always_lock_free && std::atomic<std::int64_t>::is_always_lock_free);

// Files to remove on a trip, and the newest checkpoint; the main thread
// holds the lock only to change them, never across a wait.
std::mutex g_files_mutex;
std::vector<std::string> g_temporaries;
std::string g_checkpoint;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void write_record(int phase, int peer, std::int64_t since_ns) {
  g_version.fetch_add(1);
  g_phase.store(phase);
  g_peer.store(peer);
  g_since_ns.store(since_ns);
  g_version.fetch_add(1);
}

struct Snapshot {
  Phase phase;
  int peer;
  std::int64_t step, since_ns;
};

bool read_record(Snapshot& s) {
  const std::uint64_t before = g_version.load();
  if (before % 2 != 0) return false;
  s.phase = static_cast<Phase>(g_phase.load());
  s.peer = g_peer.load();
  s.step = g_step.load();
  s.since_ns = g_since_ns.load();
  return g_version.load() == before;
}

bool stepwise(Phase p) { return p == Phase::step || p == Phase::halo || p == Phase::stop_flag; }

std::string describe_phase(const Snapshot& s) {
  const std::string step = std::to_string(s.step);
  switch (s.phase) {
    case Phase::setup:
      return "the set-up";
    case Phase::step:
      return "step " + step + "'s computation";
    case Phase::halo:
      return s.step > 0 ? "step " + step + "'s halo exchange" : "the set-up's halo exchange";
    case Phase::stop_flag:
      return "the all-reduce of the stop flag after step " + step;
    case Phase::output:
      return "an output write at step " + step;
    case Phase::checkpoint:
      return "the checkpoint write at step " + step;
    case Phase::finish:
      return "the run's final write";
    case Phase::idle:
      break;
  }
  return "an unnamed phase";
}

std::string describe_peer(int peer) { return peer >= 0 ? "rank " + std::to_string(peer) : "all ranks (a collective)"; }

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// Everything here must work while MPI and the main thread are stuck: no
// MPI, no lock the main thread could hold across a wait, no stdio buffers.
[[noreturn]] void trip(const Settings& settings, const Snapshot& s, double elapsed, double allowance) {
  std::string checkpoint;
  std::vector<std::string> temporaries;
  {
    std::lock_guard lock(g_files_mutex);
    checkpoint = g_checkpoint;
    temporaries = g_temporaries;
  }
  std::string line = "strata: rank " + std::to_string(settings.rank) +
                     ": error: a peer stopped answering: " + describe_phase(s) + " has waited " +
                     seconds_text(elapsed) + " for " + describe_peer(s.peer) + " (allowed: " + seconds_text(allowance) +
                     " from run.watchdog_floor and the recent steps, "
                     "docs/faults.md; a cut network link, or a hung or stopped process; a phase that is only slow "
                     "needs a larger run.watchdog_floor); ";
  if (!checkpoint.empty()) {
    line += "the checkpoint " + checkpoint + " is intact; continue with: " + settings.restart_hint;
  } else {
    line += "no checkpoint yet; start again with: " + settings.fresh_hint;
  }
  line += " (exit 76)\n";
  const char* p = line.data();
  std::size_t left = line.size();
  for (int tries = 0; tries < 8 && left > 0; ++tries) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) continue;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  for (const std::string& f : temporaries) ::unlink(f.c_str());
  ::_exit(static_cast<int>(ExitCode::peer_lost));
}

}  // namespace

PhaseScope::PhaseScope(Phase phase, int peer) {
  if (!t_watched || !g_running.load()) return;
  active_ = true;
  phase_ = g_phase.load();
  peer_ = g_peer.load();
  write_record(static_cast<int>(phase), peer, now_ns());
}

// The outer phase's clock starts again: an inner phase that ended is
// progress, and a long one (a checkpoint within a step) must not count
// against the step's allowance.
PhaseScope::~PhaseScope() {
  if (active_) write_record(phase_, peer_, now_ns());
}

void set_peer(int rank) {
  if (!t_watched || g_peer.load() == rank) return;
  write_record(g_phase.load(), rank, g_since_ns.load());
}

void set_step(std::int64_t step) {
  if (t_watched) g_step.store(step);
}

void step_seconds(double seconds) {
  if (!t_watched) return;
  g_recent[g_recent_next] = seconds;
  g_recent_next = (g_recent_next + 1) % kRecentSteps;
  g_recent_max.store(*std::max_element(std::begin(g_recent), std::end(g_recent)));
}

void note_checkpoint(const std::string& path) {
  std::lock_guard lock(g_files_mutex);
  g_checkpoint = path;
}

TemporaryFile::TemporaryFile(std::string path) {
  std::lock_guard lock(g_files_mutex);
  g_temporaries.push_back(std::move(path));
}

TemporaryFile::~TemporaryFile() {
  std::lock_guard lock(g_files_mutex);
  g_temporaries.pop_back();
}

Watchdog::Watchdog(Settings settings) : settings_(std::move(settings)) {
  if (settings_.floor_seconds <= 0) return;
  t_watched = true;
  g_step.store(0);
  g_recent_max.store(0);
  std::fill(std::begin(g_recent), std::end(g_recent), 0.0);
  g_recent_next = 0;
  {
    std::lock_guard lock(g_files_mutex);
    g_checkpoint.clear();
  }
  write_record(static_cast<int>(Phase::setup), kAllRanks, now_ns());
  g_running.store(true);
  thread_ = std::thread([this] { monitor(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stopping_.notify_all();
  thread_.join();
  g_running.store(false);
  write_record(static_cast<int>(Phase::idle), kAllRanks, now_ns());
  t_watched = false;
}

void Watchdog::monitor() {
  // The stop signals stay with the threads that did get them before: the
  // handler only sets a flag, and the main thread's calls see no new EINTR.
  sigset_t stops;
  sigemptyset(&stops);
  for (int sig : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&stops, sig);
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  // A tick well below the floor, so a trip comes within 5% of the allowance.
  const double tick = std::clamp(settings_.floor_seconds / 20, 0.05, 1.0);
  // A tick that comes far too late means this process did not run (a
  // SIGSTOP, a job suspended by the batch system, a machine suspended):
  // the wait up to then is not the peers' fault, so every phase's clock
  // starts again from the resumption.
  const auto late_ns = static_cast<std::int64_t>(1e9 * std::max(2.0, 4 * tick));
  std::int64_t last_tick = now_ns(), resumed = 0;
  std::unique_lock lock(mutex_);
  while (!stop_) {
    stopping_.wait_for(lock, std::chrono::duration<double>(tick));
    if (stop_) break;
    const std::int64_t now = now_ns();
    if (now - last_tick > late_ns) resumed = now;
    last_tick = now;
    Snapshot s{};
    if (!read_record(s) || s.phase == Phase::idle) continue;
    const double elapsed = 1e-9 * static_cast<double>(now - std::max(s.since_ns, resumed));
    double allowance = settings_.floor_seconds;
    if (stepwise(s.phase)) allowance = std::max(allowance, kStepFactor * g_recent_max.load());
    if (s.phase == Phase::setup) allowance *= kSetupFactor;
    if (elapsed > allowance) trip(settings_, s, elapsed, allowance);
  }
}

}  // namespace strata::watchdog
