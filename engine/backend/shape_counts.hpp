// What a run asks of a GPU, counted where it is decided and on every
// backend alike, per timer phase (Kokkos Tools' and AMReX TinyProfiler's
// counts): kernel launches and the threads of each, device-wide waits (the
// host blocked until the device is done), bytes between host and device,
// and allocations of device memory; with each launch, the device work its
// kernel declares (bytes of device memory, arithmetic operations). A run on
// the host backend counts what the same calls launch on CUDA, so a CPU run
// shows the shape of a GPU run; scripts/gpu/cost-model turns the counts
// into a predicted GPU time (docs/gpu.md).
//
// How calls are counted (the CUDA backend's behaviour, whichever backend runs):
//  - parallel_for over n > 0: one launch of n threads (grid-stride or a
//    kernel's own cuda_for);
//  - parallel_reduce over n > 0: CUB's reduction, one launch of n threads
//    plus a single-tile launch of 256 when n is over one tile (4096); the
//    result comes back to the host: a wait and sizeof(T) bytes;
//  - Buffer copies: their bytes, and a wait when not on a Stream;
//    Stream::fence and Device::fence: a wait;
//  - exclusive_scan: CUB's two launches and one summing the total, then
//    the total read back (a wait, 4 bytes); sort_pairs: CUB's radix sort, 2 + bits/8 launches;
//  - a Buffer of device memory: an allocation (cudaMalloc), and a wait
//    when it is freed (cudaFree synchronises the device).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "kernels/core/work.hpp"

namespace strata::shape {

// What one launch does on the device, as its kernel declares it
// (kernels/core/work.hpp: bytes, flops, integer instructions).
using Work = kernels::Work;

// kernel: what the launch runs (kernel_name<F>() for a functor's launch;
// empty where none is named), so the cost model can hold a launch's
// threads against what its own kernel's occupancy lets the device hold.
void launch(std::int64_t threads, Work work = {}, std::string_view kernel = {});
void wait();
void to_device(std::size_t bytes);
void to_host(std::size_t bytes);
void allocation();

// A functor type's name as the C++ ABI demangles it
// ("strata::kernels::pricing::PathGroupKernel<double>"), made once per type.
std::string demangled(const char* mangled);
template <class F>
const std::string& kernel_name() {
  static const std::string name = demangled(typeid(F).name());
  return name;
}

// Launches of one size of one kernel in one phase.
struct LaunchSize {
  std::int64_t threads = 0;
  std::int64_t launches = 0;
  double bytes = 0, flops = 0, int_ops = 0;   // their work, summed
  std::string kernel{};
};

struct PhaseCounts {
  std::string phase;
  std::int64_t launches = 0, waits = 0, allocations = 0;
  std::int64_t bytes_to_device = 0, bytes_to_host = 0;
  std::vector<LaunchSize> sizes;   // ascending threads, then kernel

  std::int64_t threads_min() const;
  std::int64_t threads_median() const;   // of launches (the lower median)
  Work work() const;
};

// Counts go to the innermost phase of the calling thread (Timers::Scope
// enters and leaves them with the timer phases); outside any phase, to
// "untimed" on the thread that runs the steps and "background" on others
// (the output writer's waits are off the steps' path).
void enter(const std::string& phase);
void leave();
void mark_background_thread();

// This process's counts, phases in the order they were first counted.
std::vector<PhaseCounts> snapshot();
void reset();

}  // namespace strata::shape
