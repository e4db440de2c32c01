// Box-Muller normals of kBatch consecutive Philox subsequences at once, for
// the host (not for CUDA: no STRATA_HD). The draws of philox_normals
// (normal.hpp), component j of call `call` of subsequence first + w into
// out[j][w], from the same detail::box_muller_pair in one `omp simd` loop
// across subsequences that GCC vectorises (Philox's 32-bit multiplies, the
// uniforms, Box-Muller) with log, cos and sin from libmvec (LaneMath):
// within a few ulp of philox_normals, not bit-equal, so a kernel drawing
// from here must draw every sample of a run from here.
#pragma once

#include <cstdint>
#include <type_traits>

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
    detail::box_muller_pair<Real, LaneMath>(bits, 0u, out[0][w], out[1][w]);
    if constexpr (NormalsPerCall<Real>::value == 4) detail::box_muller_pair<Real, LaneMath>(bits, 1u, out[2][w], out[3][w]);
  }
}

}  // namespace strata::rng
