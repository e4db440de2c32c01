// Box-Muller normals of kBatch consecutive Philox subsequences at once, for
// the host (not for CUDA: no STRATA_HD). The same draws as philox_normals
// (normal.hpp), component j of call `call` of subsequence first + w into
// out[j][w], but in one `omp simd` loop across subsequences that GCC
// vectorises (Philox's 32-bit multiplies, the uniforms, Box-Muller) with
// log, cos and sin from libmvec (kernels/core/vector_math.hpp): within a
// few ulp of philox_normals, not bit-equal, so a kernel drawing from here
// must draw every sample of a run from here.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/core/vector_math.hpp"
#include "kernels/rng/normal.hpp"
#include "kernels/rng/philox.hpp"

namespace strata::rng {

template <class Real, int kBatch>
inline void philox_normals_batch(PhiloxKey key, std::uint64_t first, std::uint64_t call, Real (*out)[kBatch]) {
  static_assert(std::is_same_v<Real, double> || std::is_same_v<Real, float>);
  // Both pairs of a float call in the same loop: constant pair indices, no
  // select for the vectoriser to turn into a branch.
#pragma omp simd
  for (int w = 0; w < kBatch; ++w) {
    const PhiloxCounter bits = philox4x32_10(philox_counter(first + static_cast<std::uint64_t>(w), call), key);
    Real u1, u2;
    detail::box_muller_uniforms(bits, 0u, u1, u2);
    Real r = std::sqrt(Real(-2) * vmath::log(u1));
    Real theta = detail::box_muller_angle(u2);
    out[0][w] = r * vmath::cos(theta);
    out[1][w] = r * vmath::sin(theta);
    if constexpr (NormalsPerCall<Real>::value == 4) {
      detail::box_muller_uniforms(bits, 1u, u1, u2);
      r = std::sqrt(Real(-2) * vmath::log(u1));
      theta = detail::box_muller_angle(u2);
      out[2][w] = r * vmath::cos(theta);
      out[3][w] = r * vmath::sin(theta);
    }
  }
}

}  // namespace strata::rng
