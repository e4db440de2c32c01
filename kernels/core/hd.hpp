// STRATA_HD marks a function as callable from host and device code.
// Under nvcc it expands to __host__ __device__; under g++ to nothing, so every
// kernel in kernels/ compiles unchanged for the host (OpenMP) backend.
#pragma once

#if defined(__CUDACC__)
#define STRATA_HD __host__ __device__
#define STRATA_FORCEINLINE __forceinline__
#else
#define STRATA_HD
#define STRATA_FORCEINLINE inline __attribute__((always_inline))
#endif

// `omp simd` on a host loop over lanes (kernels/pricing); nothing in device
// code, where a lane is a thread.
#define STRATA_PRAGMA(x) _Pragma(#x)
#if defined(__CUDA_ARCH__)
#define STRATA_LANES(...)
#else
#define STRATA_LANES(...) STRATA_PRAGMA(omp simd __VA_ARGS__)
#endif
