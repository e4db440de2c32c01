// `strata doctor --probe`: what this machine's memory and arithmetic can do,
// measured, so that every benchmark has a limit to be a fraction of.
#pragma once

#include <cstddef>

namespace strata {

struct HostProbe {
  int threads = 0;                 // OpenMP threads of the all-core figures
  std::size_t array_bytes = 0;     // per array of the copy
  double copy_gbps_all = 0;        // a[i] = b[i], bytes read plus written, all threads, best of the repetitions
  double copy_gbps_core = 0;       // the same on one thread
  double fma64_gflops_core = 0;    // 2 flops per fused multiply-add, one thread
  double fma32_gflops_core = 0;
  double fma64_gflops_all = 0;     // every thread
  double fma32_gflops_all = 0;
};

// Takes about a second: copies of arrays of `mib_per_array` MiB (far beyond
// the last-level cache), FMA chains that stay in registers.
HostProbe probe_host(std::size_t mib_per_array = 256);

}  // namespace strata
