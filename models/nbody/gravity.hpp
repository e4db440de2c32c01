// Launching the gravity sums of kernels/particles/gravity.hpp on a Device:
// on the host the vectorised group loop (GravityGroup), on CUDA the
// shared-memory tiled kernel of gravity_cuda.cu (GPU Gems 3 ch. 31), each
// adding a body's pairs in ascending source index.
#pragma once

#include "build_config.hpp"
#include "models/nbody/kernels.hpp"
#include "kernels/particles/gravity.hpp"

namespace strata::nbody {

inline constexpr std::int64_t kSerialPairs = 16384, kSerialBodies = 4096;

namespace tiles {
// The CUDA tiled kernel (gravity_cuda.cu); block pointers are device memory.
template <class Real>
void accumulate(const kernels::particles::GravityBlock<Real>& b);
}  // namespace tiles

// Adds the pull of b's sources to b's targets' sums. Pointers live on `device`.
template <class Real>
void accumulate_gravity(const Device& device, const kernels::particles::GravityBlock<Real>& b) {
  if (b.n_targets <= 0 || b.n_sources <= 0) return;
  if (device.backend == Backend::cuda) {
    if constexpr (build::kHaveCuda) {
      tiles::accumulate(b);
    } else {
      detail::no_cuda_backend();
    }
  } else {
    using Group = kernels::particles::GravityGroup<Real>;
    const Group g{b};
    // A few thousand pairs cost less than waking the OpenMP team.
    if (b.n_targets * b.n_sources < kSerialPairs) {
      for (std::int64_t i = 0; i < Group::groups(b.n_targets); ++i) g(i);
    } else {
      host::parallel_for(Group::groups(b.n_targets), g);
    }
  }
}

// parallel_for, but a short host loop runs on the calling thread (a
// two-body orbit would otherwise spend its time starting thread teams).
template <class F>
void for_bodies(const Device& device, std::int64_t n, const F& f) {
  if (device.backend == Backend::host && n < kSerialBodies) {
    for (std::int64_t i = 0; i < n; ++i) f(i);
  } else {
    parallel_for(device, n, f);
  }
}

}  // namespace strata::nbody
