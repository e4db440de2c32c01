#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <string>

#include "engine/backend/cuda_runtime.hpp"
#include "engine/runtime/error.hpp"

namespace strata::cuda {

void check(int cuda_error, const char* what) {
  const auto e = static_cast<cudaError_t>(cuda_error);
  if (e == cudaSuccess) return;
  std::string msg = std::string("CUDA error in ") + what + ": " + cudaGetErrorName(e) + " (" +
                    cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation) throw ResourceError(msg);
  throw Error(ExitCode::internal, msg);
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

DeviceInfo device_info(int ordinal) {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, ordinal), "cudaGetDeviceProperties");
  DeviceInfo d;
  d.name = p.name;
  d.ordinal = ordinal;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.total_memory = p.totalGlobalMem;
  d.multiprocessors = p.multiProcessorCount;
  d.max_threads_per_multiprocessor = p.maxThreadsPerMultiProcessor;
  d.memory_bus_width_bits = p.memoryBusWidth;
  int clock = 0;
  if (cudaDeviceGetAttribute(&clock, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess) {
    d.memory_clock_khz = clock;
  } else {
    (void)cudaGetLastError();
  }
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal) == cudaSuccess) d.pci_bus_id = bus;
  return d;
}

void set_device(int ordinal) { check(cudaSetDevice(ordinal), "cudaSetDevice"); }

int driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

int runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

std::size_t free_memory() {
  std::size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  return free_bytes;
}

namespace {
// An allocation whose failure (the memory is full) is a ResourceError naming `what` and the size.
void* allocated(cudaError_t e, void* p, std::size_t bytes, const char* what) {
  if (e == cudaSuccess) return p;
  (void)cudaGetLastError();
  throw ResourceError(std::string(what) + ": cannot allocate " + std::to_string(bytes) + " bytes (" +
                      cudaGetErrorString(e) + ")");
}
}  // namespace

void* allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  return allocated(e, p, bytes, "device memory");
}

void release(void* p) noexcept { (void)cudaFree(p); }

void fill_bytes(void* p, unsigned char byte, std::size_t bytes) {
  check(cudaMemsetAsync(p, byte, bytes, cudaStreamLegacy), "cudaMemset (fresh memory)");
  check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize (fresh memory)");
}

void* allocate_pinned(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMallocHost(&p, bytes);
  return allocated(e, p, bytes, "pinned host memory");
}

void release_pinned(void* p) noexcept { (void)cudaFreeHost(p); }

namespace {
void copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, void* stream, const char* what) {
  check(stream == nullptr ? cudaMemcpy(dst, src, bytes, kind)
                          : cudaMemcpyAsync(dst, src, bytes, kind, static_cast<cudaStream_t>(stream)),
        what);
}
}  // namespace

void copy_to_host(void* dst, const void* src, std::size_t bytes, void* stream) {
  copy(dst, src, bytes, cudaMemcpyDeviceToHost, stream, "cudaMemcpy device-to-host");
}

void copy_to_device(void* dst, const void* src, std::size_t bytes, void* stream) {
  copy(dst, src, bytes, cudaMemcpyHostToDevice, stream, "cudaMemcpy host-to-device");
}

void copy_on_device(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy), "cudaMemcpy device-to-device");
}

void synchronize() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

void* stream_create() {
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  return s;
}

void stream_destroy(void* stream) noexcept { (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream)); }

void stream_after_default(void* stream) {
  cudaEvent_t done = nullptr;
  check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  check(cudaEventRecord(done, cudaStreamLegacy), "cudaEventRecord");
  check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), done, 0), "cudaStreamWaitEvent");
  check(cudaEventDestroy(done), "cudaEventDestroy");   // released once the wait no longer needs it
}

void stream_synchronize(void* stream) {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

void check_launch(const char* what) { check(cudaGetLastError(), what); }

void range_push(const char* name) noexcept { nvtxRangePushA(name); }
void range_pop() noexcept { nvtxRangePop(); }

}  // namespace strata::cuda
