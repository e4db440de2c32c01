// Wall time per phase on each rank, summarised as min/avg/max over ranks.
// A phase's time excludes the phases timed inside it (diagnostics and
// output inside a step's "compute", forces inside it for particles), so
// the phases add up to the run's time and "compute" of a grid model is its
// steps alone, as /performance/compute_seconds.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "engine/backend/cuda_runtime.hpp"
#include "engine/backend/shape_counts.hpp"

namespace strata {

class MpiContext;
class H5Output;

class Timers {
 public:
  class Scope {
   public:
    // Each phase is also an NVTX range of its name (a CUDA build under nsys)
    // and the phase the shape counts of its launches go to.
    Scope(Timers& t, std::string phase)
        : timers_(t), phase_(std::move(phase)), start_(Clock::now()), outer_(t.innermost_) {
      timers_.innermost_ = this;
      cuda::range_push(phase_.c_str());
      shape::enter(phase_);
    }
    ~Scope() {
      shape::leave();
      cuda::range_pop();
      const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
      timers_.add(phase_, elapsed - inner_seconds_);
      if (outer_ != nullptr) outer_->inner_seconds_ += elapsed;
      timers_.innermost_ = outer_;
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Timers& timers_;
    std::string phase_;
    std::chrono::steady_clock::time_point start_;
    Scope* outer_;                // the scope this one runs inside, if any
    double inner_seconds_ = 0;    // time of the scopes inside this one
  };
  using Clock = std::chrono::steady_clock;

  Scope scope(std::string phase) { return Scope(*this, std::move(phase)); }
  void add(const std::string& phase, double seconds);
  double seconds(const std::string& phase) const;

  struct Summary {
    std::string phase;
    double min = 0, avg = 0, max = 0;   // seconds over ranks
  };
  // Collective. Phases are taken in rank 0's order of first use; a phase a
  // rank never entered counts as 0 s there.
  std::vector<Summary> summarize(const MpiContext& mpi) const;
  static std::string format(const std::vector<Summary>& s);
  static void write(H5Output& out, const std::vector<Summary>& s);

 private:
  std::vector<std::pair<std::string, double>> phases_;
  Scope* innermost_ = nullptr;   // scopes nest on the thread that runs the steps
};

}  // namespace strata
