// exp, log, cos, sin and erfc that GCC turns into calls of glibc's vector math
// library (libmvec: _ZGV<isa>N<width>v_<name>, e.g. _ZGVdN4v_exp for four
// doubles on AVX2) inside a `#pragma omp simd` loop on the host, and into
// the scalar libm (host) or CUDA (device) functions everywhere else.
//
// glibc declares its functions SIMD-capable only under -ffast-math
// (bits/math-vector.h), which would also change rounding everywhere. Here
// the libm symbols are declared a second time under strata's own names
// (asm labels keep the symbol, hence the vector variants' names), so only
// the loops that call vmath:: change, and every other std::exp stays
// scalar. libmvec's functions are within 4 ulp of the exact value (glibc
// manual, "Errors in Math Functions"), not bit-equal to the scalar libm:
// a kernel that uses them must compute every sample in the same
// vectorised loop to stay bitwise reproducible. std::sqrt in such a loop
// vectorises only with -fno-math-errno (sqrt of a negative sets errno).
// Debian's libm.so links libmvec as needed, so nothing else is linked.
#pragma once

#include <cmath>

#include "kernels/core/hd.hpp"

#if !defined(__CUDACC__) && defined(__x86_64__) && defined(__GLIBC__) && defined(_OPENMP)
#define STRATA_VECTOR_MATH 1
// vmath::fn(type) calling libm's `symbol`, with its SIMD variants.
#define STRATA_LIBMVEC_FUNCTION(type, fn, symbol)                                                \
  _Pragma("omp declare simd notinbranch") extern "C" type strata_libmvec_##symbol(type) noexcept \
      __asm__(#symbol);                                                                          \
  namespace strata::vmath {                                                                      \
  inline type fn(type x) { return strata_libmvec_##symbol(x); }                                  \
  }
STRATA_LIBMVEC_FUNCTION(double, exp, exp)
STRATA_LIBMVEC_FUNCTION(double, log, log)
STRATA_LIBMVEC_FUNCTION(double, cos, cos)
STRATA_LIBMVEC_FUNCTION(double, sin, sin)
STRATA_LIBMVEC_FUNCTION(double, erfc, erfc)   // libmvec has erfc since glibc 2.35
STRATA_LIBMVEC_FUNCTION(float, exp, expf)
STRATA_LIBMVEC_FUNCTION(float, log, logf)
STRATA_LIBMVEC_FUNCTION(float, cos, cosf)
STRATA_LIBMVEC_FUNCTION(float, sin, sinf)
STRATA_LIBMVEC_FUNCTION(float, erfc, erfcf)
#undef STRATA_LIBMVEC_FUNCTION
#else
#define STRATA_VECTOR_MATH 0
namespace strata::vmath {
using std::cos, std::erfc, std::exp, std::log, std::sin;
}  // namespace strata::vmath
#endif
