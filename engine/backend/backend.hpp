// Where kernels run: the host (OpenMP threads) or one CUDA device per rank.
// Chosen once per run; models pass the Device to parallel_for/_reduce.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

class MpiContext;

enum class Backend { host, cuda };
enum class Precision { fp64, fp32 };

std::string_view to_string(Backend b);
std::string_view to_string(Precision p);

struct Device {
  Backend backend = Backend::host;
  int ordinal = -1;           // CUDA device ordinal; -1 on the host
  int host_threads = 1;       // OpenMP threads of this rank
  std::string name;           // "NVIDIA H100 80GB HBM3 (cuda:0)" or "host: 2 OpenMP threads"

  // Threads the device holds at once: on CUDA its multiprocessors times
  // the threads each holds (an H200: 132 x 2,048); on the host its OpenMP
  // threads.
  std::int64_t resident_threads = 1;
  // The device's memory in bytes (CUDA's total global memory; 0 on the
  // host, whose launches stay within launch_bytes()).
  std::size_t memory_bytes = 0;
  // Launches sized as on a GPU while running on the host
  // (STRATA_LAUNCH_AS=cuda): the host then makes the launches, waits and
  // transfers a CUDA run of the same input would, for the shape counts and
  // the cost model (docs/gpu.md). Results do not depend on it.
  bool gpu_sized = false;

  bool on_cuda() const { return backend == Backend::cuda; }
  bool gpu_launches() const { return on_cuda() || gpu_sized; }
  // Waits until every kernel and copy sent to this device has finished (a
  // no-op on the host, whose launches return when done). The one place
  // where a caller waits on the device: before timing a phase, before the
  // host reads what a kernel wrote without a copy.
  void fence() const;

  // How big a model's launches should be here: the working memory of one
  // launch (within the host's caches and memory; enough to fill a GPU), and
  // the independent work items of one chunk (a lively progress line on the
  // host; about 1M threads in flight on a GPU).
  std::size_t launch_bytes() const { return gpu_launches() ? std::size_t{1} << 30 : std::size_t{64} << 20; }
  std::int64_t chunk_items() const { return gpu_launches() ? std::int64_t{1} << 28 : std::int64_t{1} << 22; }
  // The working memory of a launch whose threads each keep a whole path of
  // their own (pricing's thread a sample): an eighth of the device's memory,
  // so that a GPU's threads fit, and never less than launch_bytes().
  std::size_t wide_launch_bytes() const { return std::max(launch_bytes(), memory_bytes / 8); }
};

// An ordered queue of launches and copies on a Device, so that a copy can
// run beside kernels. On CUDA a non-blocking stream of its own; on the host
// nothing (every launch and copy there is done when it returns). Stream{}
// is the default stream. parallel_for / _reduce and Buffer's copies take one.
class Stream {
 public:
  Stream() = default;
  explicit Stream(const Device& device);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // What is sent to this stream from now on starts after what the default
  // stream already has (the kernels that wrote what it is to copy).
  void after_default() const;
  // Waits until everything sent to this stream has finished.
  void fence() const;
  void* handle() const { return handle_; }   // a cudaStream_t; null: the default stream
  // A stream of its own (on the host too, where it does nothing): a copy on
  // it does not wait (shape_counts.hpp).
  bool own() const { return own_; }

 private:
  void* handle_ = nullptr;
  bool own_ = false;
};

// request: "auto" | "cuda" | "host". "auto" takes CUDA where a device is
// visible, else the host. One GPU per rank, by node-local rank. Sets the
// OpenMP thread count from the cores shared by the ranks of this node unless
// OMP_NUM_THREADS is set. Throws InputError for "cuda" with no device.
Device select_device(std::string_view request, const MpiContext& mpi);

}  // namespace strata
