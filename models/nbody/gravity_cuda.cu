// Gravity::cuda_for: the shared-memory tiled all-pairs kernel (Nyland,
// Harris, Prins, GPU Gems 3 ch. 31: each block loads a tile of source
// bodies into shared memory, every thread adds the tile's pull on its own
// body). A thread adds its body's pairs in ascending source index with
// pair_interaction, the same order as the host reference.
#include <cuda_runtime.h>

#include "engine/backend/cuda_runtime.hpp"
#include "models/nbody/kernels.hpp"

namespace strata::nbody {

namespace {

constexpr int kTile = 256;

template <class Real>
__global__ void __launch_bounds__(kTile) gravity_tiles(kernels::particles::GravityBlock<Real> b) {
  __shared__ Real tile[4 * kTile];
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * kTile + threadIdx.x;
  const bool active = t < b.n_targets;
  Real x = 0, y = 0, z = 0, ax = 0, ay = 0, az = 0, p = 0;
  if (active) {
    x = b.targets[4 * t];
    y = b.targets[4 * t + 1];
    z = b.targets[4 * t + 2];
    ax = b.acc[3 * t];
    ay = b.acc[3 * t + 1];
    az = b.acc[3 * t + 2];
    p = b.phi[t];
  }
  const std::int64_t self = b.target_first + t - b.source_first;
  for (std::int64_t base = 0; base < b.n_sources; base += kTile) {
    const std::int64_t s = base + threadIdx.x;
    if (s < b.n_sources)
      for (int d = 0; d < 4; ++d) tile[4 * threadIdx.x + d] = b.sources[4 * s + d];
    __syncthreads();
    const int count = static_cast<int>(b.n_sources - base < kTile ? b.n_sources - base : kTile);
    if (active) {
      if (self >= base && self < base + count) {
        for (int k = 0; k < count; ++k)
          if (base + k != self) kernels::particles::pair_interaction(x, y, z, tile + 4 * k, b.eps2, ax, ay, az, p);
      } else {
#pragma unroll 8
        for (int k = 0; k < count; ++k) kernels::particles::pair_interaction(x, y, z, tile + 4 * k, b.eps2, ax, ay, az, p);
      }
    }
    __syncthreads();
  }
  if (active) {
    b.acc[3 * t] = ax;
    b.acc[3 * t + 1] = ay;
    b.acc[3 * t + 2] = az;
    b.phi[t] = p;
  }
}

}  // namespace

template <class Real>
void Gravity<Real>::cuda_for(std::int64_t n_targets, void* stream) const {
  if (n_targets <= 0 || b.n_sources <= 0) return;
  const std::int64_t blocks = (n_targets + kTile - 1) / kTile;
  gravity_tiles<Real><<<static_cast<unsigned>(blocks), kTile, 0, static_cast<cudaStream_t>(stream)>>>(b);
  cuda::check_launch("gravity_tiles");
}

template void Gravity<float>::cuda_for(std::int64_t, void*) const;
template void Gravity<double>::cuda_for(std::int64_t, void*) const;

}  // namespace strata::nbody

