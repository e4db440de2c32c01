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

// Before a STRATA_HD function template that calls whatever its type
// argument provides (a visitor that is host-only in one instantiation and
// device-only in another): nvcc then checks each call where it is
// instantiated, not in the template (Thrust's nv_exec_check_disable).
#if defined(__CUDACC__)
#define STRATA_HD_TEMPLATE _Pragma("nv_exec_check_disable")
#else
#define STRATA_HD_TEMPLATE
#endif
