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
// division (rsqrt.approx in fp32, at most 2 ulp; in fp64 its estimate and
// the one correction of CUDA's rsqrt, at most 1 ulp), the softening as the
// first term of r^2 and every multiply-add fused. So CUDA's sums differ
// from the host's in the last bits of each pair (the host keeps the
// correctly rounded square root and division and rounds each product);
// on either backend they are the same for any number of ranks.
//
// The inner loop's SASS (nvcc 13.0, sm_90) a pair: fp64 17 FP64
// instructions, a MUFU, an LDS.128 and about 2 others; fp32 12 FP32, a
// MUFU, a quarter of an LDS.128 and 3/8 of the loop's own (Gravity::work
// says how they bound it). Where every body has the same mass
// (GravityBlock::masses false) the pair leaves it out: a multiplication
// fewer (fp64 16, fp32 11; its PTX has 4 and 2 mul a pair where the kernel
// with masses has 5 and 3). Registers (ptxas): fp64 72, fp32 64, no
// spills, either way.
#include <cuda_runtime.h>

#include <type_traits>

#include "engine/backend/cuda_runtime.hpp"
#include "models/nbody/kernels.hpp"

namespace strata::nbody {

namespace {

constexpr int kTile = 256;

// Bodies per thread: 2 in fp64, 4 in fp32; Gravity::kTargetsPerBlock is
// kTile of these. More would leave an H200's 132 SMs short of blocks at
// the benchmark's 262,144 bodies (8 fp32 bodies a thread: 128 blocks).
template <class Real>
constexpr int kBodies = sizeof(Real) == 4 ? 4 : 2;

// 1/sqrt(r2) for r2 a normal number below 2^1023 (always so with softening;
// without it, two bodies on one place give NaN, as 0 * inf does on the
// host). fp32: the MUFU estimate alone (rsqrt.approx, 2 ulp); .ftz drops
// rsqrtf's rescaling of subnormal arguments (3 instructions a pair).
__device__ __forceinline__ float inverse_sqrt(float r2) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(r2));
  return y;
}

// fp64: CUDA's rsqrt without its branch to the slow path for zero,
// subnormal, huge and non-finite arguments (a compare, a branch and the
// call's moves, 7 instructions a pair): the MUFU estimate of the high word
// and the same one cubic correction, e = 1 - r2 y^2, y + y e (1/2 + 3/8 e):
// 2 DMUL and 3 DFMA, the bits of rsqrt (1 ulp).
__device__ __forceinline__ double inverse_sqrt(double r2) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(r2));
  const double e = fma(-r2, y * y, 1.0);
  return fma(fma(e, 0.375, 0.5), y * e, y);
}

// A source as the tile holds it: one 16-byte shared load in fp32 (LDS.128),
// two in fp64.
template <class Real>
struct Source {
  Real x, y, z, w;   // w: the mass
};
__device__ __forceinline__ Source<float> source(const float4* tile, int k) {
  const float4 a = tile[k];
  return {a.x, a.y, a.z, a.w};
}
__device__ __forceinline__ Source<double> source(const double2* tile, int k) {
  const double2 a = tile[2 * k], b = tile[2 * k + 1];
  return {a.x, a.y, b.x, b.y};
}
__device__ __forceinline__ void store(float4* tile, int k, const float* body) {
  tile[k] = make_float4(body[0], body[1], body[2], body[3]);
}
__device__ __forceinline__ void store(double2* tile, int k, const double* body) {
  tile[2 * k] = make_double2(body[0], body[1]);
  tile[2 * k + 1] = make_double2(body[2], body[3]);
}

template <class Real>
using Packed = std::conditional_t<sizeof(Real) == 4, float4, double2>;

// The pair: the softening is the first term of r^2 (three FMAs, no add), and
// the sums are explicit FMAs. 12 FP instructions and the root (11 without
// Masses: every body's mass the same, applied by the caller); the order of
// a body's sum is the host's.
template <bool Potential, bool Masses, class Real>
__device__ __forceinline__ void pair_sum(Real x, Real y, Real z, const Source<Real>& s, Real eps2, Real& ax, Real& ay,
                                         Real& az, Real& phi) {
  const Real dx = s.x - x, dy = s.y - y, dz = s.z - z;
  const Real r2 = fma(dz, dz, fma(dy, dy, fma(dx, dx, eps2)));
  const Real inv_r = inverse_sqrt(r2);
  const Real m_inv_r = Masses ? s.w * inv_r : inv_r;
  const Real m_inv_r3 = m_inv_r * inv_r * inv_r;
  ax = fma(m_inv_r3, dx, ax);
  ay = fma(m_inv_r3, dy, ay);
  az = fma(m_inv_r3, dz, az);
  if constexpr (Potential) phi = phi - m_inv_r;
}

template <class Real, bool Potential, bool Masses>
__global__ void __launch_bounds__(kTile) gravity_tiles(kernels::particles::GravityBlock<Real> b) {
  constexpr int kB = kBodies<Real>;
  __shared__ Packed<Real> tile[4 * kTile * sizeof(Real) / sizeof(Packed<Real>)];
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kTile * kB + threadIdx.x;
  Real x[kB], y[kB], z[kB], ax[kB], ay[kB], az[kB], p[kB];
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
  }
  // Body q's own index among the sources: self + q * kTile (one 64-bit
  // register, not kB).
  const std::int64_t self = b.target_first + first - b.source_first;
  for (std::int64_t base = 0; base < b.n_sources; base += kTile) {
    const std::int64_t s = base + threadIdx.x;
    if (s < b.n_sources) store(tile, static_cast<int>(threadIdx.x), b.sources + 4 * s);
    __syncthreads();
    const int count = static_cast<int>(b.n_sources - base < kTile ? b.n_sources - base : kTile);
    bool meets_itself = false;
#pragma unroll
    for (int q = 0; q < kB; ++q)
      meets_itself = meets_itself || (self + q * kTile >= base && self + q * kTile < base + count);
    if (meets_itself) {   // a tile holding one of this thread's targets: skip the pair with itself
      for (int k = 0; k < count; ++k) {
        const auto src = source(tile, k);
#pragma unroll
        for (int q = 0; q < kB; ++q)
          if (base + k != self + q * kTile)
            pair_sum<Potential, Masses>(x[q], y[q], z[q], src, b.eps2, ax[q], ay[q], az[q], p[q]);
      }
    } else {
#pragma unroll 4   // 8: fp32 0.19 instructions a pair fewer, 80 registers (occupancy 50% -> 37.5%)
      for (int k = 0; k < count; ++k) {
        const auto src = source(tile, k);
#pragma unroll
        for (int q = 0; q < kB; ++q)
          pair_sum<Potential, Masses>(x[q], y[q], z[q], src, b.eps2, ax[q], ay[q], az[q], p[q]);
      }
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
  const unsigned grid = static_cast<unsigned>(blocks);
  if (b.potential && b.masses) {
    gravity_tiles<Real, true, true><<<grid, kTile, 0, s>>>(b);
  } else if (b.potential) {
    gravity_tiles<Real, true, false><<<grid, kTile, 0, s>>>(b);
  } else if (b.masses) {
    gravity_tiles<Real, false, true><<<grid, kTile, 0, s>>>(b);
  } else {
    gravity_tiles<Real, false, false><<<grid, kTile, 0, s>>>(b);
  }
  cuda::check_launch("gravity_tiles");
}

template void Gravity<float>::cuda_for(std::int64_t, void*) const;
template void Gravity<double>::cuda_for(std::int64_t, void*) const;

}  // namespace strata::nbody
