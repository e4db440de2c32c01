#include "engine/runtime/probe.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

namespace strata {
namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Best bytes/s of a[i] = b[i] over `threads` threads, first-touch placed.
double copy_rate(std::size_t n, int threads, int reps) {
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]);
  const auto count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    a[i] = 0.0;
    b[i] = static_cast<double>(i);
  }
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::ptrdiff_t i = 0; i < count; ++i) a[i] = b[i];
    const double t = now() - t0;
    best = std::max(best, 2.0 * 8.0 * static_cast<double>(n) / t);
  }
  // Keep the copies: a value the compiler must produce.
  volatile double sink = a[n / 2];
  (void)sink;
  return best;
}

// Fused multiply-adds per second on `threads` threads: each thread runs
// kChains independent chains x = x * m + c (enough to cover the FMA units'
// latency with full vectors), m just below 1 so nothing overflows.
template <typename T>
double fma_rate(int threads, long iterations) {
  constexpr int kChains = 64;
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    double elapsed = 0;
    double total = 0;
#pragma omp parallel num_threads(threads) reduction(max : elapsed) reduction(+ : total)
    {
      alignas(64) T x[kChains];
      for (int k = 0; k < kChains; ++k) x[k] = static_cast<T>(1 + omp_get_thread_num() + k) / T(kChains);
      const T m = T(0.999999), c = T(1e-7);
#pragma omp barrier
      const double t0 = now();
      for (long it = 0; it < iterations; ++it) {
#pragma omp simd aligned(x : 64)
        for (int k = 0; k < kChains; ++k) x[k] = std::fma(x[k], m, c);
      }
      elapsed = now() - t0;
      T s = 0;
      for (int k = 0; k < kChains; ++k) s += x[k];
      total = static_cast<double>(s);
    }
    volatile double sink = total;
    (void)sink;
    best = std::max(best, 2.0 * kChains * static_cast<double>(iterations) * threads / elapsed);
  }
  return best;
}

}  // namespace

HostProbe probe_host(std::size_t mib_per_array) {
  HostProbe p;
  p.threads = omp_get_max_threads();
  p.array_bytes = mib_per_array << 20;
  const std::size_t n = p.array_bytes / sizeof(double);
  p.copy_gbps_all = copy_rate(n, p.threads, 5) / 1e9;
  p.copy_gbps_core = copy_rate(n, 1, 3) / 1e9;
  const long iters = 4'000'000;
  p.fma64_gflops_core = fma_rate<double>(1, iters) / 1e9;
  p.fma32_gflops_core = fma_rate<float>(1, iters) / 1e9;
  p.fma64_gflops_all = fma_rate<double>(p.threads, iters) / 1e9;
  p.fma32_gflops_all = fma_rate<float>(p.threads, iters) / 1e9;
  return p;
}

}  // namespace strata
