// A series of kernel launches sent as one: on CUDA a graph, captured from
// the launches each time it runs and launched on the default stream (when
// the launches have the shape of the previous run, the same kernels in the
// same order, only their arguments are updated: a grid model's steps);
// on the host the launches themselves. The shape counts see one launch of
// the kernels' work on every backend (shape_counts.hpp: begin_graph), and
// refuse, on every backend, what a CUDA graph cannot hold: a wait (a
// reduction read back, a fence), a copy, an allocation.
#pragma once

#include "engine/backend/backend.hpp"
#include "engine/backend/cuda_runtime.hpp"
#include "engine/backend/shape_counts.hpp"

namespace strata {

class LaunchGraph {
 public:
  explicit LaunchGraph(const Device& device) : cuda_(device.on_cuda()), stream_(device) {}
  ~LaunchGraph() { cuda::graph_exec_destroy(exec_); }
  LaunchGraph(const LaunchGraph&) = delete;
  LaunchGraph& operator=(const LaunchGraph&) = delete;

  // Runs body(), whose kernels go to the default stream, as one graph
  // launch. A body that throws launches nothing on CUDA (on the host its
  // launches before the throw have run).
  template <class Body>
  void run(Body&& body) {
    shape::begin_graph();
    if (cuda_) cuda::capture_begin(stream_.handle());
    try {
      body();
    } catch (...) {
      shape::abandon_graph();
      if (cuda_) cuda::capture_abandon(stream_.handle());
      throw;
    }
    if (cuda_) exec_ = cuda::capture_end_launch(stream_.handle(), exec_);
    shape::end_graph();
  }

 private:
  bool cuda_;
  Stream stream_;          // the capture's own (a capture cannot be on the default stream)
  void* exec_ = nullptr;   // cudaGraphExec_t of the last run
};

}  // namespace strata
