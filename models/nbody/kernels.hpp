// The nbody model's kernels on a Device, and its kernel list
// (engine/backend/parallel.hpp).
#pragma once

#include "engine/backend/parallel.hpp"
#include "kernels/core/op_costs.hpp"
#include "kernels/core/work.hpp"
#include "kernels/particles/gravity.hpp"

namespace strata::nbody {

// parallel_for(device, b.n_targets, Gravity{b}) adds the pull of b's
// sources to b's targets' sums: on the host the vectorised group loop
// (GravityGroup), on CUDA the shared-memory tiles of gravity_cuda.cu (GPU
// Gems 3 ch. 31). Each adds a body's pairs in ascending source index.
template <class Real>
struct Gravity {
  kernels::particles::GravityBlock<Real> b;

  // A few thousand pairs cost less than waking the OpenMP team.
  static constexpr std::int64_t kSerialPairs = 16384;
  void host_for(std::int64_t n_targets) const {
    if (n_targets <= 0 || b.n_sources <= 0) return;
    const kernels::particles::GravityGroup<Real> g{b};
    const std::int64_t groups = g.groups(n_targets);
    if (n_targets * b.n_sources < kSerialPairs) {
      for (std::int64_t i = 0; i < groups; ++i) g(i);
    } else {
      host::parallel_for(groups, g);
    }
  }
  void cuda_for(std::int64_t n_targets, void* stream) const;   // gravity_cuda.cu

  // Each pair: pair_interaction's 14 adds, multiplies and FMAs, a square
  // root and a division (kernels/core/op_costs.hpp); the bodies stream
  // through shared memory, so device memory is a few bytes a pair.
  kernels::Work work(std::int64_t n_targets) const {
    using kernels::OpCost;
    const double pairs = static_cast<double>(n_targets) * static_cast<double>(b.n_sources);
    return kernels::item_work<Real>(0, 14 + OpCost<Real>::sqrt + OpCost<Real>::div) * pairs;
  }
};

}  // namespace strata::nbody

#define STRATA_NBODY_KERNELS(M, Real)                        \
  STRATA_FOR(M, strata::nbody::Gravity<Real>)                \
  STRATA_FOR(M, strata::kernels::particles::ClearSums<Real>) \
  STRATA_FOR(M, strata::kernels::particles::BodyKick<Real>)  \
  STRATA_FOR(M, strata::kernels::particles::BodyDrift<Real>)
STRATA_DECLARE_KERNELS(STRATA_NBODY_KERNELS)
