#include "engine/backend/backend.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>

#include "build_config.hpp"
#include "engine/backend/cuda_runtime.hpp"
#include "engine/backend/shape_counts.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/thread_layout.hpp"

namespace strata {

std::string_view to_string(Backend b) { return b == Backend::cuda ? "cuda" : "host"; }
std::string_view to_string(Precision p) { return p == Precision::fp32 ? "fp32" : "fp64"; }

namespace {

int host_threads_for(const MpiContext& mpi) {
  if (const char* env = std::getenv("OMP_NUM_THREADS"); env != nullptr && *env != '\0') {
    return omp_get_max_threads();
  }
  // Share the cores this process may use between the node's ranks so 2
  // ranks on 2 cores do not run 4 threads (thread_layout.hpp).
  const int threads = cores_per_rank(mpi.local_size());
  omp_set_num_threads(threads);
  return threads;
}

}  // namespace

Device select_device(std::string_view request, const MpiContext& mpi) {
  Device d;
  d.host_threads = host_threads_for(mpi);
  const int n_gpu = cuda::device_count();
  bool use_cuda = false;
  if (request == "cuda") {
    if (!build::kHaveCuda) {
      throw InputError("this strata was built without the CUDA backend "
                       "(rebuild with STRATA_CUDA=ON where nvcc exists), use backend = \"host\"");
    }
    if (n_gpu == 0) throw InputError("no CUDA device is visible to rank " +
                                     std::to_string(mpi.rank()));
    use_cuda = true;
  } else if (request == "auto") {
    use_cuda = n_gpu > 0;
  } else if (request != "host") {
    throw InputError("\"" + std::string(request) + "\": must be auto, cuda or host");
  }
  if (use_cuda) {
    d.backend = Backend::cuda;
    d.ordinal = mpi.local_rank() % n_gpu;
    cuda::set_device(d.ordinal);
    const cuda::DeviceInfo info = cuda::device_info(d.ordinal);
    d.name = info.name + " (cuda:" + std::to_string(d.ordinal) + ")";
    d.resident_threads = std::int64_t{info.multiprocessors} * info.max_threads_per_multiprocessor;
    d.memory_bytes = info.total_memory;
  } else {
    d.backend = Backend::host;
    d.name = "host (" + std::to_string(d.host_threads) + " OpenMP thread" + (d.host_threads == 1 ? "" : "s") + ")";
    d.resident_threads = d.host_threads;
    const char* as = std::getenv("STRATA_LAUNCH_AS");
    if (as != nullptr && std::string_view(as) == "cuda") {
      // The card the cost model's figures come from (docs/gpu.md): an H200.
      d.gpu_sized = true;
      d.resident_threads = std::int64_t{132} * 2048;
      d.memory_bytes = std::size_t{141} * 1000 * 1000 * 1000;
      d.name += ", launches sized as on a GPU";
    } else if (as != nullptr && *as != '\0' && std::string_view(as) != "host") {
      throw InputError("STRATA_LAUNCH_AS=\"" + std::string(as) + "\": must be cuda or host");
    }
  }
  return d;
}

void Device::fence() const {
  shape::wait();
  if (on_cuda()) cuda::synchronize();
}

Stream::Stream(const Device& device) : handle_(device.on_cuda() ? cuda::stream_create() : nullptr), own_(true) {}
Stream::~Stream() {
  if (handle_ != nullptr) cuda::stream_destroy(handle_);
}
void Stream::after_default() const {
  if (handle_ != nullptr) cuda::stream_after_default(handle_);
}
void Stream::fence() const {
  shape::wait();
  if (handle_ != nullptr) cuda::stream_synchronize(handle_);
}

namespace detail {
[[noreturn]] void no_cuda_backend() {
  throw Error(ExitCode::internal, "a kernel was sent to the CUDA backend of a build without it");
}
}  // namespace detail

}  // namespace strata
