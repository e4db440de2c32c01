// strata::cuda::probe_device: the current device's copy bandwidth, FMA rates
// and host transfer bandwidth, measured with CUDA events (best of several
// repetitions after a warm-up), next to the peaks its attributes imply.
#include <cuda_runtime.h>

#include <algorithm>

#include "engine/backend/cuda_runtime.hpp"

namespace strata::cuda {
namespace {

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = in[i];
}

// kChains independent chains per thread, enough with a full SM of threads
// to cover the FMA pipeline's latency; the store never happens but the
// compiler cannot know it, so every FMA stays.
constexpr int kChains = 8;
template <typename T>
__global__ void fma_kernel(T* out, int iterations, T m, T c) {
  T x[kChains];
#pragma unroll
  for (int k = 0; k < kChains; ++k) x[k] = static_cast<T>(threadIdx.x + k) * static_cast<T>(1e-3);
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int k = 0; k < kChains; ++k) x[k] = fma(x[k], m, c);
  }
  T s = 0;
#pragma unroll
  for (int k = 0; k < kChains; ++k) s += x[k];
  if (s == static_cast<T>(-1)) out[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = s;
}

// Seconds of the fastest of `reps` runs of `launch` (after one warm-up).
template <typename F>
double best_seconds(int reps, F launch) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  launch();
  check(cudaDeviceSynchronize(), "warm-up");
  float best_ms = 0;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(start), "cudaEventRecord");
    launch();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (r == 0 || ms < best_ms) best_ms = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best_ms * 1e-3;
}

// FP32 and FP64 FMA lanes per SM (the CUDA C Programming Guide's throughput
// table); {0, 0} for an architecture not listed.
struct Lanes {
  int fp32 = 0, fp64 = 0;
};
Lanes fma_lanes(int major, int minor) {
  if (major == 7 && minor == 0) return {64, 32};
  if (major == 7) return {64, 2};
  if (major == 8 && minor == 0) return {64, 32};
  if (major == 8) return {128, 2};
  if (major == 9 || major == 10) return {128, 64};
  if (major == 12) return {128, 2};
  return {};
}

template <typename T>
double fma_gflops(int blocks, int threads, T* sink) {
  const int iterations = 1 << 15;
  const double s = best_seconds(5, [&] {
    fma_kernel<T><<<blocks, threads>>>(sink, iterations, static_cast<T>(0.999999), static_cast<T>(1e-7));
  });
  check(cudaGetLastError(), "fma_kernel");
  return 2.0 * kChains * iterations * static_cast<double>(blocks) * threads / s / 1e9;
}

}  // namespace

DeviceProbe probe_device() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  DeviceProbe p;
  const DeviceInfo info = device_info(device);
  const int sms = info.multiprocessors;
  if (cudaDeviceGetAttribute(&p.sm_clock_khz, cudaDevAttrClockRate, device) != cudaSuccess) {
    (void)cudaGetLastError();   // no peak FMA rate then
    p.sm_clock_khz = 0;
  }
  p.peak_copy_gbps = 2.0 * info.memory_clock_khz * 1e3 * info.memory_bus_width_bits / 8.0 / 1e9;
  const Lanes lanes = fma_lanes(info.cc_major, info.cc_minor);
  p.peak_fma32_gflops = 2.0 * sms * lanes.fp32 * p.sm_clock_khz * 1e3 / 1e9;
  p.peak_fma64_gflops = 2.0 * sms * lanes.fp64 * p.sm_clock_khz * 1e3 / 1e9;

  // 1 GiB buffers (a quarter of free memory where that is less): far beyond
  // the L2 cache of any current device.
  std::size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  p.bytes = std::min<std::size_t>(std::size_t{1} << 30, free_bytes / 4) / sizeof(float4) * sizeof(float4);
  const std::size_t n = p.bytes / sizeof(float4);
  float4 *a = nullptr, *b = nullptr;
  void* host = nullptr;
  double* sink = nullptr;
  auto release_all = [&] {
    cudaFree(a);
    cudaFree(b);
    cudaFree(sink);
    cudaFreeHost(host);
  };
  try {
    check(cudaMalloc(&a, p.bytes), "cudaMalloc");
    check(cudaMalloc(&b, p.bytes), "cudaMalloc");
    check(cudaMemset(a, 0, p.bytes), "cudaMemset");
    const int threads = 256;
    const int blocks = sms * std::max(1, info.max_threads_per_multiprocessor / threads);
    check(cudaMalloc(&sink, static_cast<std::size_t>(blocks) * threads * sizeof(double)), "cudaMalloc");
    const double copy_s = best_seconds(10, [&] { copy_kernel<<<blocks, threads>>>(a, b, n); });
    check(cudaGetLastError(), "copy_kernel");
    p.copy_gbps = 2.0 * static_cast<double>(p.bytes) / copy_s / 1e9;
    p.fma32_gflops = fma_gflops<float>(blocks, threads, reinterpret_cast<float*>(sink));
    p.fma64_gflops = fma_gflops<double>(blocks, threads, sink);

    const std::size_t transfer = std::min<std::size_t>(p.bytes, std::size_t{256} << 20);
    check(cudaMallocHost(&host, transfer), "cudaMallocHost");
    const double h2d_s = best_seconds(5, [&] { cudaMemcpyAsync(a, host, transfer, cudaMemcpyHostToDevice); });
    const double d2h_s = best_seconds(5, [&] { cudaMemcpyAsync(host, a, transfer, cudaMemcpyDeviceToHost); });
    check(cudaGetLastError(), "cudaMemcpyAsync");
    p.h2d_gbps = static_cast<double>(transfer) / h2d_s / 1e9;
    p.d2h_gbps = static_cast<double>(transfer) / d2h_s / 1e9;
  } catch (...) {
    release_all();
    throw;
  }
  release_all();
  return p;
}

}  // namespace strata::cuda
