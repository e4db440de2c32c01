#include "engine/sweep/sweep_runner.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <streambuf>
#include <string>
#include <vector>

#include "engine/cli/commands.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/stop_request.hpp"
#include "engine/sweep/point_dir.hpp"
#include "engine/sweep/sweep_spec.hpp"

namespace strata {
namespace {

constexpr int kStopped = static_cast<int>(ExitCode::stopped);

// --index: the run's output goes to the point's log and to stdout.
class TeeBuffer : public std::streambuf {
 public:
  TeeBuffer(std::streambuf* a, std::streambuf* b) : a_(a), b_(b) {}

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    a_->sputc(static_cast<char>(c));
    b_->sputc(static_cast<char>(c));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    a_->sputn(s, n);
    b_->sputn(s, n);
    return n;
  }
  int sync() override { return (a_->pubsync() | b_->pubsync()) == 0 ? 0 : -1; }

 private:
  std::streambuf *a_, *b_;
};

std::string local_time_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &tm);
  return text;
}

struct PointOutcome {
  int code = 0;
  std::string message;  // the error, when code is neither 0 nor 75
};

// Runs one point on every rank of `group` (collective). The leader writes
// the point's input.toml, its log and its markers; `done` comes last, after
// run_command has closed the complete output. A collective Error from the
// run marks the point failed; anything only one rank knows is rethrown.
PointOutcome run_point(const SweepSpec& spec, std::size_t p, const MpiContext& group, std::ostream* also) {
  const std::string dir = spec.point_dir(p);
  std::ofstream log;
  group.collective([&] {
    if (!group.root()) return;
    write_file_atomically(dir + "/input.toml", spec.point_config(p).to_toml());
    remove_marker(dir, "failed");
    // Appended: a point resumed after a checkpoint keeps the earlier log.
    log.open(dir + "/log", std::ios::app);
    if (!log) throw Error(ExitCode::resources, "cannot write '" + dir + "/log'");
    // Every line reaches the file as it is written: a point killed with
    // SIGKILL (an out-of-memory kill, scancel --signal=KILL) keeps its log
    // up to the kill, which is what the post-mortem needs.
    log << std::unitbuf;
    log << "== strata sweep: " << spec.point_name(p) << " (" << spec.describe(p) << ") on " << group.size()
        << " rank(s), " << local_time_now() << "\n";
  });

  std::ostream null_stream(nullptr);   // non-leader ranks of a group print nothing
  TeeBuffer tee(log.rdbuf(), also != nullptr ? also->rdbuf() : log.rdbuf());
  std::ostream tee_stream(&tee);
  tee_stream << std::unitbuf;
  std::ostream& out = !group.root() ? null_stream : also != nullptr ? tee_stream : log;

  RunArgs args;
  args.input = dir + "/input.toml";
  args.output_given = true;
  args.output = dir + "/output.h5";
  args.resume_if_possible = true;
  PointOutcome outcome;
  try {
    outcome.code = run_command(group, out, args);
  } catch (const Error& e) {
    if (!e.collective()) throw;
    outcome.code = static_cast<int>(e.code());
    outcome.message = e.what();
  }
  out.flush();

  group.collective([&] {
    if (!group.root()) return;
    if (outcome.code == 0) {
      log << "== done " << local_time_now() << "\n";
      log.close();
      write_file_atomically(dir + "/done", local_time_now() + "\n");
    } else if (outcome.code == kStopped) {
      log << "== stopped after a checkpoint (exit 75) " << local_time_now() << "\n";
    } else {
      log << "== failed (exit " << outcome.code << "): " << outcome.message << "\n";
      write_file_atomically(dir + "/failed",
                            "exit " + std::to_string(outcome.code) + ": " + outcome.message + "\n");
    }
  });
  return outcome;
}

// The group leader's walk: the first point from `cursor` on that is neither
// done nor (without retry) failed and whose lock it gets. A point locked by
// another group is that group's until it is done or failed (a failed
// point's lock is held until the job ends), so the cursor only moves on.
long long claim_next(const SweepSpec& spec, std::size_t& cursor, bool retry_failed, PointLock& lock) {
  for (; cursor < spec.points(); ++cursor) {
    const std::string dir = spec.point_dir(cursor);
    auto eligible = [&] { return !marker_exists(dir, "done") && (retry_failed || !marker_exists(dir, "failed")); };
    if (!eligible()) continue;
    lock = PointLock::try_acquire(dir);
    if (!lock.held()) continue;
    // Another process may have finished it between the check and the lock.
    if (!eligible()) {
      lock = PointLock();
      continue;
    }
    return static_cast<long long>(cursor++);
  }
  return -1;
}

// A communicator from MPI_Comm_split, freed at scope exit.
struct GroupComm {
  MPI_Comm comm = MPI_COMM_NULL;
  ~GroupComm() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

}  // namespace

int run_sweep_index(const SweepSpec& spec, const MpiContext& world, std::ostream& out, std::size_t index) {
  install_stop_handlers();
  const std::string dir = spec.point_dir(index);
  const std::string name = spec.point_name(index);
  // Rank 0 decides (done, locked elsewhere, or ours) and tells the rest.
  int state = 0;  // 0 run, 1 done, 2 locked elsewhere
  PointLock lock;
  world.collective([&] {
    if (!world.root()) return;
    if (marker_exists(dir, "done")) {
      state = 1;
    } else {
      lock = PointLock::try_acquire(dir);
      if (!lock.held()) state = 2;
    }
  });
  MPI_Bcast(&state, 1, MPI_INT, 0, world.comm());
  if (state == 1) {
    out << name << " is done (" << dir << "): nothing to run\n";
    return 0;
  }
  if (state == 2) {
    // EX_TEMPFAIL: try again later, like a point stopped after a checkpoint.
    if (world.root()) std::cerr << "strata: " << name << " is being run by another process (" << dir << "/lock)\n";
    return kStopped;
  }
  out << "sweep " << spec.input() << ": " << name << " (" << spec.describe(index) << ")\n";
  const PointOutcome outcome = run_point(spec, index, world, world.root() ? &out : nullptr);
  if (outcome.code == 0) out << name << " done\n";
  if (outcome.code != 0 && outcome.code != kStopped) {
    throw Error(static_cast<ExitCode>(outcome.code), name + ": " + outcome.message, true);
  }
  return outcome.code;
}

int run_sweep_all(const SweepSpec& spec, const MpiContext& world, std::ostream& out, const SweepArgs& opt) {
  install_stop_handlers();
  // Group g holds world ranks [g * size / groups, (g + 1) * size / groups).
  int groups = world.size();
  world.collective([&] {
    if (opt.ranks_per_point > 0 && opt.jobs > 0) throw InputError("--ranks-per-point and --jobs: give one of them");
    if (opt.jobs > 0) {
      if (opt.jobs > world.size()) {
        throw InputError("--jobs " + std::to_string(opt.jobs) + ": more groups than the " +
                         std::to_string(world.size()) + " MPI rank(s) of this job");
      }
      groups = opt.jobs;
    } else if (opt.ranks_per_point > 0) {
      if (world.size() % opt.ranks_per_point != 0) {
        throw InputError("--ranks-per-point " + std::to_string(opt.ranks_per_point) + ": the job's " +
                         std::to_string(world.size()) + " MPI rank(s) do not divide into groups of that size");
      }
      groups = world.size() / opt.ranks_per_point;
    }
  });
  const int color = static_cast<int>(static_cast<long long>(world.rank()) * groups / world.size());
  GroupComm split;
  MPI_Comm_split(world.comm(), color, world.rank(), &split.comm);
  const MpiContext group(split.comm);

  out << "sweep " << spec.input() << ": " << spec.points() << " points, " << groups << " group(s) of " << group.size()
      << " rank(s), in " << spec.output_dir() << "\n";

  int ran = 0, failed = 0, stopped = 0, infra_code = 0;
  std::string infra_message;
  {
    std::vector<PointLock> failed_locks;  // failed points stay claimed until the job ends
    std::size_t cursor = 0;
    try {
      while (true) {
        // A signal between points: deal no more (the points in flight
        // checkpoint themselves through the step loop).
        if (group.any(stop_signal() != 0)) {
          stopped = 1;
          break;
        }
        long long next = -1;
        PointLock lock;
        group.collective([&] {
          if (group.root()) next = claim_next(spec, cursor, opt.retry_failed, lock);
        });
        MPI_Bcast(&next, 1, MPI_LONG_LONG, 0, group.comm());
        if (next < 0) break;
        const auto p = static_cast<std::size_t>(next);
        const PointOutcome outcome = run_point(spec, p, group, nullptr);
        if (outcome.code == 0) {
          ++ran;
        } else if (outcome.code == kStopped) {
          stopped = 1;  // deal no more: the job is being stopped
          break;
        } else {
          ++failed;
          if (group.root()) {
            std::cerr << "strata: sweep " << spec.point_name(p) << " failed (exit " << outcome.code
                      << "): " << outcome.message << std::endl;
            failed_locks.push_back(std::move(lock));
          }
        }
      }
    } catch (const Error& e) {
      // Collective within the group (writing a marker failed, say): this
      // group stops; the others finish their points, then the job reports it.
      if (!e.collective()) throw;
      infra_code = static_cast<int>(e.code());
      infra_message = e.what();
      if (group.root()) std::cerr << "strata: sweep: " << infra_message << std::endl;
    }

    // All groups are back before anything is counted.
    int local[2] = {stopped, infra_code}, global[2] = {0, 0};
    MPI_Allreduce(local, global, 2, MPI_INT, MPI_MAX, world.comm());
    stopped = global[0];
    infra_code = global[1];
    int counts[2] = {group.root() ? ran : 0, group.root() ? failed : 0}, totals[2] = {0, 0};
    MPI_Allreduce(counts, totals, 2, MPI_INT, MPI_SUM, world.comm());
    ran = totals[0];
    failed = totals[1];
  }

  // Count from the markers: they include the points done by earlier jobs.
  std::size_t count[4] = {0, 0, 0, 0};   // by PointStatus
  if (world.root()) {
    for (std::size_t p = 0; p < spec.points(); ++p) ++count[static_cast<int>(point_status(spec.point_dir(p)))];
  }
  const auto count_of = [&count](PointStatus s) { return count[static_cast<int>(s)]; };
  const std::size_t n_done = count_of(PointStatus::done), n_failed = count_of(PointStatus::failed);
  const std::size_t n_other = count_of(PointStatus::pending) + count_of(PointStatus::running);
  out << "sweep: " << ran << " point(s) run now, " << failed << " failed now; " << n_done << " of " << spec.points()
      << " done, " << n_failed << " failed, " << n_other << " not done\n";
  if (n_failed > 0)
    out << "  (strata sweep " << spec.input()
        << " --status lists the failures; --all --retry-failed runs them again)\n";

  int result = 0;
  if (stopped) {
    out << "sweep: stopped after a checkpoint; run it again to continue\n";
    result = kStopped;
  } else if (infra_code != 0) {
    result = infra_code;
  } else {
    // Every rank returns the same: rank 0's view of the markers. Points
    // still held by another process are not done: try again later (75).
    int verdict[2] = {n_failed > 0 ? 1 : 0, n_other > 0 ? 1 : 0};
    MPI_Bcast(verdict, 2, MPI_INT, 0, world.comm());
    if (verdict[0]) {
      result = static_cast<int>(ExitCode::numerical);
    } else if (verdict[1]) {
      out << "sweep: some points are being run by another process; run it again when that has finished\n";
      result = kStopped;
    }
  }
  return result;
}

}  // namespace strata
