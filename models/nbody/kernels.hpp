// The nbody model's kernels on a Device, and its kernel list
// (engine/backend/parallel.hpp).
#pragma once

#include "engine/backend/parallel.hpp"
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

  // Each pair on CUDA, counted in the SASS of gravity_cuda.cu's inner loop
  // (nvcc 13.0, sm_90, `cuobjdump -sass`: a pass of 4 sources over a
  // thread's bodies). fp64: 17 FP64 instructions, 3 DADD, 5 DMUL and 9 DFMA
  // (the pair's 12, the softening folded into r^2; the root's correction, 2
  // DMUL and 3 DFMA); its MUFU.RSQ64H, one LDS.128 and about 2 integer and
  // branch instructions issue beside them on other pipes, so the FP64 pipe
  // (half the issue rate) bounds it. fp32: every instruction takes an issue
  // slot at the FFMA rate: 12 FP32 (3 FADD, 3 FMUL, 6 FFMA), the MUFU.RSQ,
  // a quarter of an LDS.128 (one source serves 4 bodies) and 6 loop
  // instructions (counter, address, compare, branch) over 16 pairs. The
  // potential adds one subtraction. The bodies stream through shared
  // memory: device memory is a few bytes a pair, counted as the targets'
  // and sources' loads and the sums' stores. Where every body has the same
  // mass the pair leaves it out (GravityBlock::masses): one FMUL (DMUL)
  // fewer.
  static constexpr double kPairSlots = sizeof(Real) == 4 ? 12 + 1 + 4.0 / 16 + 6.0 / 16 : 12 + 5;
  kernels::Work work(std::int64_t n_targets) const {
    const double pairs = static_cast<double>(n_targets) * static_cast<double>(b.n_sources);
    const double blocks = static_cast<double>((n_targets + kTargetsPerBlock - 1) / kTargetsPerBlock);
    const double streamed = blocks * static_cast<double>(b.n_sources) * 4 +
                            static_cast<double>(n_targets) * (4 + 2 * (b.potential ? 4 : 3));
    const double slots = kPairSlots + (b.potential ? 1 : 0) - (b.masses ? 0 : 1);
    return kernels::item_work<Real>(0, slots) * pairs + kernels::item_work<Real>(streamed, 0);
  }
  // The targets a CUDA block sums (gravity_cuda.cu): its sources are read
  // once a block.
  static constexpr std::int64_t kTargetsPerBlock = 256 * (sizeof(Real) == 4 ? 4 : 2);
};

}  // namespace strata::nbody

#define STRATA_NBODY_KERNELS(M, Real)                        \
  STRATA_FOR(M, strata::nbody::Gravity<Real>)                \
  STRATA_FOR(M, strata::kernels::particles::BodyKick<Real>)  \
  STRATA_FOR(M, strata::kernels::particles::BodyKickDrift<Real>)
STRATA_DECLARE_KERNELS(STRATA_NBODY_KERNELS)
