// Gravity::cuda_for: the shared-memory tiled all-pairs kernel (Nyland,
// Harris, Prins, GPU Gems 3 ch. 31: each block loads a tile of source
// bodies into shared memory, every thread adds the tile's pull on its own
// bodies). A thread holds kBodies targets (register tiling: each source
// read from shared memory serves kBodies pairs), at t, t + kTile, ..., so a
// warp's loads of targets and stores of sums stay coalesced. Each target's
// pairs are added in ascending source index, one at a time, as on the host:
// the order, hence the bits, do not depend on the tiles, the pieces a rank
// sums its sources in or the number of ranks.
//
// The pair (pair_sum below) is pair_interaction's with 1/sqrt(r^2) from the
// reciprocal square root instruction rather than a square root and a
// division: rsqrtf in fp32 (rsqrt.approx.f32, at most 2 ulp by CUDA's
// documentation), rsqrt in fp64 (the instruction's estimate and Newton
// steps in CUDA's math library, at most 1 ulp). nvcc contracts the
// multiply-adds. So CUDA's sums differ
// from the host's in the last bits of each pair (the host keeps the
// correctly rounded square root and division); on either backend they are
// the same for any number of ranks.
#include <cuda_runtime.h>

#include "engine/backend/cuda_runtime.hpp"
#include "models/nbody/kernels.hpp"

namespace strata::nbody {

namespace {

constexpr int kTile = 256;

// Bodies per thread: 2 in fp64 (with the Newton step, 14 registers of sums
// and coordinates a body), 4 in fp32; Gravity::kTargetsPerBlock is kTile of these.
template <class Real>
constexpr int kBodies = sizeof(Real) == 4 ? 4 : 2;

__device__ __forceinline__ float inverse_sqrt(float r2) { return rsqrtf(r2); }

__device__ __forceinline__ double inverse_sqrt(double r2) { return rsqrt(r2); }

template <bool Potential, class Real>
__device__ __forceinline__ void pair_sum(Real x, Real y, Real z, const Real* s, Real eps2, Real& ax, Real& ay,
                                         Real& az, Real& phi) {
  const Real dx = s[0] - x, dy = s[1] - y, dz = s[2] - z;
  const Real r2 = dx * dx + dy * dy + dz * dz + eps2;
  const Real inv_r = inverse_sqrt(r2);
  const Real m_inv_r = s[3] * inv_r;
  const Real m_inv_r3 = m_inv_r * inv_r * inv_r;
  ax = ax + m_inv_r3 * dx;
  ay = ay + m_inv_r3 * dy;
  az = az + m_inv_r3 * dz;
  if constexpr (Potential) phi = phi - m_inv_r;
}

template <class Real, bool Potential>
__global__ void __launch_bounds__(kTile) gravity_tiles(kernels::particles::GravityBlock<Real> b) {
  constexpr int kB = kBodies<Real>;
  __shared__ Real tile[4 * kTile];
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kTile * kB + threadIdx.x;
  Real x[kB], y[kB], z[kB], ax[kB], ay[kB], az[kB], p[kB];
  std::int64_t self[kB];
#pragma unroll
  for (int q = 0; q < kB; ++q) {
    const std::int64_t t = first + q * kTile;
    x[q] = y[q] = z[q] = ax[q] = ay[q] = az[q] = p[q] = Real(0);
    if (t < b.n_targets) {
      x[q] = b.targets[4 * t];
      y[q] = b.targets[4 * t + 1];
      z[q] = b.targets[4 * t + 2];
      if (!b.clear) {
        ax[q] = b.acc[3 * t];
        ay[q] = b.acc[3 * t + 1];
        az[q] = b.acc[3 * t + 2];
        if (Potential) p[q] = b.phi[t];
      }
    }
    self[q] = b.target_first + t - b.source_first;
  }
  for (std::int64_t base = 0; base < b.n_sources; base += kTile) {
    const std::int64_t s = base + threadIdx.x;
    if (s < b.n_sources)
      for (int d = 0; d < 4; ++d) tile[4 * threadIdx.x + d] = b.sources[4 * s + d];
    __syncthreads();
    const int count = static_cast<int>(b.n_sources - base < kTile ? b.n_sources - base : kTile);
    bool meets_itself = false;
#pragma unroll
    for (int q = 0; q < kB; ++q) meets_itself = meets_itself || (self[q] >= base && self[q] < base + count);
    if (meets_itself) {   // a tile holding one of this thread's targets: skip the pair with itself
      for (int k = 0; k < count; ++k)
#pragma unroll
        for (int q = 0; q < kB; ++q)
          if (base + k != self[q]) pair_sum<Potential>(x[q], y[q], z[q], tile + 4 * k, b.eps2, ax[q], ay[q], az[q], p[q]);
    } else {
#pragma unroll 4
      for (int k = 0; k < count; ++k)
#pragma unroll
        for (int q = 0; q < kB; ++q)
          pair_sum<Potential>(x[q], y[q], z[q], tile + 4 * k, b.eps2, ax[q], ay[q], az[q], p[q]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int q = 0; q < kB; ++q) {
    const std::int64_t t = first + q * kTile;
    if (t < b.n_targets) {
      b.acc[3 * t] = ax[q];
      b.acc[3 * t + 1] = ay[q];
      b.acc[3 * t + 2] = az[q];
      if (Potential) b.phi[t] = p[q];
    }
  }
}

}  // namespace

template <class Real>
void Gravity<Real>::cuda_for(std::int64_t n_targets, void* stream) const {
  static_assert(kTargetsPerBlock == kTile * kBodies<Real>);
  if (n_targets <= 0 || b.n_sources <= 0) return;
  const std::int64_t blocks = (n_targets + kTargetsPerBlock - 1) / kTargetsPerBlock;
  const auto s = static_cast<cudaStream_t>(stream);
  if (b.potential) {
    gravity_tiles<Real, true><<<static_cast<unsigned>(blocks), kTile, 0, s>>>(b);
  } else {
    gravity_tiles<Real, false><<<static_cast<unsigned>(blocks), kTile, 0, s>>>(b);
  }
  cuda::check_launch("gravity_tiles");
}

template void Gravity<float>::cuda_for(std::int64_t, void*) const;
template void Gravity<double>::cuda_for(std::int64_t, void*) const;

}  // namespace strata::nbody
