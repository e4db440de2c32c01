// The few CUDA runtime calls the engine needs, behind plain C++ signatures so
// that everything outside *.cu files compiles with g++. Defined in
// cuda_runtime.cu when the CUDA backend is built, else in cuda_stub.cpp
// (where device_count() is 0 and the rest throws).
#pragma once

#include <cstddef>
#include <string>

namespace strata::cuda {

struct DeviceInfo {
  std::string name;
  int ordinal = -1;
  int cc_major = 0, cc_minor = 0;
  std::size_t total_memory = 0;      // bytes
  int multiprocessors = 0;
  int max_threads_per_multiprocessor = 0;
  double memory_clock_khz = 0;       // 0 where the runtime no longer reports it
  int memory_bus_width_bits = 0;
  std::string pci_bus_id;
};

int device_count();                 // 0 where no driver or no device, never throws
DeviceInfo device_info(int ordinal);
void set_device(int ordinal);
int driver_version();               // e.g. 13000; 0 if no driver
int runtime_version();
std::size_t free_memory();          // on the current device

void* allocate(std::size_t bytes);  // throws ResourceError with the size on failure
void release(void* p) noexcept;
// Every byte of [p, p + bytes) of device memory set to `byte`, done before
// it returns (a fresh Buffer's poison: no stream's first use may overtake it).
void fill_bytes(void* p, unsigned char byte, std::size_t bytes);
// Page-locked host memory (a copy to it on a stream runs beside kernels).
void* allocate_pinned(std::size_t bytes);   // throws ResourceError with the size on failure
void release_pinned(void* p) noexcept;
// Streams (Stream in backend.hpp) are non-blocking cudaStream_t as void*.
// A copy without a stream is done when it returns; one on a stream is
// ordered there and done at stream_synchronize (beside kernels only from
// and to pinned host memory: from pageable memory the driver stages it).
void copy_to_host(void* dst, const void* src, std::size_t bytes, void* stream = nullptr);
void copy_to_device(void* dst, const void* src, std::size_t bytes, void* stream = nullptr);
// Device to device, queued on the default stream after the kernels before it.
void copy_on_device(void* dst, const void* src, std::size_t bytes);
void synchronize();
void* stream_create();
void stream_destroy(void* stream) noexcept;
void stream_after_default(void* stream);   // waits, on the device, for the default stream's work so far
void stream_synchronize(void* stream);

// Throws strata::Error naming `what` if the last launch failed.
void check_launch(const char* what);
// For the *.cu files: a cudaError_t that is not cudaSuccess as an Error
// naming `what` (ResourceError for cudaErrorMemoryAllocation).
void check(int cuda_error, const char* what);

// `strata doctor --probe` on the current device: measured rates beside the
// peaks its attributes imply (0 where the runtime does not report what a
// peak needs, or for an architecture this build does not know).
struct DeviceProbe {
  std::size_t bytes = 0;              // per buffer of the copies
  double copy_gbps = 0;               // device-memory copy kernel, bytes read plus written
  double fma64_gflops = 0, fma32_gflops = 0;   // 2 flops per FMA
  double h2d_gbps = 0, d2h_gbps = 0;  // cudaMemcpy from and to pinned host memory
  double peak_copy_gbps = 0;          // 2 (double data rate) x memory clock x bus width
  double peak_fma64_gflops = 0, peak_fma32_gflops = 0;   // SMs x FMA lanes per SM x 2 x SM clock
  int sm_clock_khz = 0;
};
DeviceProbe probe_device();

// NVTX ranges (header-only NVTX 3 from the toolkit), so that `nsys profile`
// shows strata's timer phases by name; nearly free when no profiler is
// attached, and no-ops in a host-only build.
void range_push(const char* name) noexcept;
void range_pop() noexcept;

}  // namespace strata::cuda
