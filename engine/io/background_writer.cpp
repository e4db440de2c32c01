#include "engine/io/background_writer.hpp"

#include <chrono>
#include <cstdlib>
#include <string>

#include "engine/backend/shape_counts.hpp"
#include "engine/io/test_switches.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/watchdog.hpp"

namespace strata {

BackgroundWriter::BackgroundWriter(const MpiContext& mpi, bool threaded) : mpi_(mpi) {
  test_delay_ = test_switches::output_delay();
  if (const char* v = std::getenv("STRATA_TEST_OUTPUT_FAIL"); v != nullptr && *v != '\0') {
    const std::string text = v;
    const auto colon = text.find(':');
    test_fail_job_ = test_switches::number("STRATA_TEST_OUTPUT_FAIL", text.substr(0, colon));
    if (colon != std::string::npos)
      test_fail_rank_ = static_cast<int>(test_switches::number("STRATA_TEST_OUTPUT_FAIL", text.substr(colon + 1)));
  }
  if (threaded && mpi.thread_multiple()) thread_ = std::thread([this] {
      shape::mark_background_thread();   // its waits are off the steps' path
      run_jobs();
    });
}

BackgroundWriter::~BackgroundWriter() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void BackgroundWriter::run_one(std::function<void()>& job) noexcept {
  // After a failure the file may be inconsistent: nothing more is written.
  if (error_) return;
  try {
    job();
  } catch (...) {
    error_ = std::current_exception();
  }
}

void BackgroundWriter::submit(std::function<void()> job) {
  if (test_delay_ > 0 || test_fail_job_ >= 0) {
    const bool fail = jobs_ == test_fail_job_ && mpi_.rank() == test_fail_rank_;
    job = [job = std::move(job), delay = test_delay_, fail, n = jobs_] {
      if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      job();
      // After the job's collective calls, as when rank 0 alone fails to
      // write the XDMF sidecar: a failure before them would leave the
      // other ranks waiting in a collective, synchronous or not.
      if (fail) throw ResourceError("output job " + std::to_string(n) + " failed (STRATA_TEST_OUTPUT_FAIL)");
    };
  }
  ++jobs_;
  if (!thread_.joinable()) {
    // Synchronous: the caller waits for the whole write.
    watchdog::PhaseScope phase(watchdog::Phase::output);
    const auto t0 = std::chrono::steady_clock::now();
    run_one(job);
    waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(job));
  }
  changed_.notify_all();
}

void BackgroundWriter::run_jobs() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return closing_ || !queue_.empty(); });
    if (queue_.empty()) return;   // closing, and nothing left to write
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    run_one(job);
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

void BackgroundWriter::wait() noexcept {
  if (!thread_.joinable()) return;
  watchdog::PhaseScope phase(watchdog::Phase::output);
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return queue_.empty() && !busy_; });
  waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BackgroundWriter::drain() {
  watchdog::PhaseScope phase(watchdog::Phase::output);
  wait();
  mpi_.collective([&] {
    if (error_) std::rethrow_exception(error_);
  });
}

}  // namespace strata
