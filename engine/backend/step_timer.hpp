// The device time of a model's steps, measured without waiting after each
// step. On CUDA, events on the default stream: start() opens a span (where
// none is open) and stop() moves its end to after the launches sent so
// far; settle() waits for the span's end (one wait) and adds it. A span
// covers the steps and any idle time of the device between them, so a
// model settles before other device work or a pause between steps (its
// output, a health check, a checkpoint). On the host, where launches are
// done when they return, each start()-stop() pair is timed by the clock,
// as exactly as before; settle() counts the wait the CUDA backend makes,
// so both show the same shape.
#pragma once

#include <chrono>

#include "engine/backend/backend.hpp"
#include "engine/backend/cuda_runtime.hpp"
#include "engine/backend/shape_counts.hpp"

namespace strata {

class StepTimer {
 public:
  explicit StepTimer(const Device& device) : cuda_(device.on_cuda()) {
    if (cuda_) {
      begin_ = cuda::event_create();
      end_ = cuda::event_create();
    }
  }
  ~StepTimer() {
    cuda::event_destroy(begin_);
    cuda::event_destroy(end_);
  }
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;

  void start() {
    if (cuda_) {
      if (!open_) cuda::event_record(begin_);
    } else {
      started_ = std::chrono::steady_clock::now();
    }
    open_ = true;
  }
  void stop() {
    if (cuda_) {
      cuda::event_record(end_);
    } else {
      total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    }
  }
  // Seconds of every span so far, the open one included (waited for).
  double settle() {
    if (!open_) return total_;
    open_ = false;
    shape::wait();
    if (cuda_) total_ += cuda::event_seconds(begin_, end_);
    return total_;
  }
  double seconds() const { return total_; }   // of the settled spans

 private:
  bool cuda_;
  bool open_ = false;
  void* begin_ = nullptr;   // cudaEvent_t
  void* end_ = nullptr;
  std::chrono::steady_clock::time_point started_{};
  double total_ = 0;
};

}  // namespace strata
