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
