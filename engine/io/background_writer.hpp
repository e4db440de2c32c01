// Output jobs on one background thread, so the time steps go on while a
// frame goes to the file system.
//
// A job is a closure over a snapshot the caller has already taken (the
// fields copied off the device into host vectors) that makes collective
// HDF5 calls on the run's file. Every rank queues the same jobs in the same
// order, and one thread per rank runs them in that order, so the
// collective calls still match across ranks. HDF5 makes its own duplicate
// of the file's communicator (H5Pset_fapl_mpio), so its MPI-IO collectives
// never interleave with the main thread's halo exchanges and all-reduces;
// that needs MPI_THREAD_MULTIPLE. Debian's HDF5 is not built thread-safe,
// so nothing else may call HDF5 while a job runs: whoever touches an HDF5
// file outside the jobs drains the writer first (the engine does before
// checkpoints, at the end and on failure; see Simulation::flush_output).
//
// Without MPI_THREAD_MULTIPLE, or with `threaded` false, a job runs at once
// on the caller's thread and the writer is synchronous.
//
// Test-only switches, from the environment: STRATA_TEST_OUTPUT_DELAY_MS
// (each job sleeps first: a slow file system) and
// STRATA_TEST_OUTPUT_FAIL=JOB[:RANK] (job number JOB, from 0, fails on
// rank RANK, default 0, after its collective calls: a full disk when rank
// 0 writes the XDMF sidecar).
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace strata {

class MpiContext;

class BackgroundWriter {
 public:
  BackgroundWriter(const MpiContext& mpi, bool threaded);
  ~BackgroundWriter();   // runs what is queued, then joins
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Queues a job (runs it at once when not threaded). Every rank must
  // queue the same jobs in the same order. A job that throws is kept as
  // the writer's error; the jobs after it are skipped.
  void submit(std::function<void()> job);
  // Waits until every queued job has run; a job's failure on any rank
  // becomes the same Error on every rank. Collective.
  void drain();
  // Waits until every queued job has run, reporting nothing (a run that
  // is failing anyway, before it marks its file). Local.
  void wait() noexcept;
  // Seconds the caller spent waiting for jobs: in drain() and wait(), and
  // synchronously, in the whole of every job.
  double waited_seconds() const { return waited_; }

 private:
  void run_jobs();
  void run_one(std::function<void()>& job) noexcept;

  const MpiContext& mpi_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  bool busy_ = false, closing_ = false;
  std::exception_ptr error_;
  double waited_ = 0;
  long long jobs_ = 0;                    // submitted so far
  double test_delay_ = 0;                 // seconds
  long long test_fail_job_ = -1;
  int test_fail_rank_ = 0;
  std::thread thread_;
};

}  // namespace strata
