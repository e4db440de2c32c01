// The host twin of PairForces (pair_forces.hpp), written with GCC/Clang
// vector extensions so that the eight lanes of a neighbour group are eight
// vector lanes (two 32-byte registers in double, one in float). It performs
// exactly PairForces's operations in exactly its order (per lane the same
// IEEE operations, no contraction, the same final lane tree), so it gives
// the same bits; tests/unit/test_md_forces.cpp checks that. Host only: never
// include it from a *.cu file.
#pragma once

#include <cstdint>

#include "kernels/particles/pair_forces.hpp"

namespace strata::kernels::particles {

template <class Real, bool Tally>
struct PairForcesHost {
  PairForces<Real, Tally> k;

  static constexpr int kLanes = PairForces<Real, Tally>::kLanes;
  // 32-byte vectors (AVX2): 4 doubles or 8 floats; a group of kLanes
  // neighbours is kParts of them (lane l of the group is lane l % kWidth of
  // part l / kWidth).
  static constexpr int kWidth = 32 / static_cast<int>(sizeof(Real));
  static constexpr int kParts = kLanes / kWidth;
  typedef Real Vec __attribute__((vector_size(32)));

  STRATA_FORCEINLINE void operator()(std::int64_t i) const {
    const Real* const x = k.x;
    const Real* const y = k.y;
    const Real* const z = k.z;
    const LennardJones<Real> p = k.lj;
    const Real xi = x[i], yi = y[i], zi = z[i];
    const int* const row = k.neighbours + i * k.capacity;
    const int n = k.count[i];
    const Vec zero = Vec{}, one = zero + Real(1);
    Vec a0[kParts], a1[kParts], a2[kParts], ae[kParts], aw[kParts];
    for (int h = 0; h < kParts; ++h) a0[h] = a1[h] = a2[h] = ae[h] = aw[h] = zero;
    for (int k0 = 0; k0 < n; k0 += kLanes) {
      for (int h = 0; h < kParts; ++h) {
        Vec dx, dy, dz;
        for (int l = 0; l < kWidth; ++l) {
          const int j = row[k0 + h * kWidth + l];
          dx[l] = xi - x[j];
          dy[l] = yi - y[j];
          dz[l] = zi - z[j];
        }
        const Vec rsq = dx * dx + dy * dy + dz * dz;
        const auto inside = (rsq < p.cutsq) & (rsq > Real(0));
        const Vec safe = inside ? rsq : one;
        // LennardJones::evaluate, lane-wise.
        const Vec r2inv = one / safe;
        const Vec r6inv = r2inv * r2inv * r2inv;
        const Vec forcelj = r6inv * (p.lj1 * r6inv - p.lj2);
        const Vec fpair = inside ? forcelj * r2inv : zero;
        a0[h] += dx * fpair;
        a1[h] += dy * fpair;
        a2[h] += dz * fpair;
        if constexpr (Tally) {
          const Vec epair = r6inv * (p.lj3 * r6inv - p.lj4) - p.offset;
          ae[h] += inside ? epair : zero;
          aw[h] += rsq * fpair;
        }
      }
    }
    k.fx[i] = lane_sum(a0);
    k.fy[i] = lane_sum(a1);
    k.fz[i] = lane_sum(a2);
    if constexpr (Tally) {
      k.energy[i] = Real(0.5) * lane_sum(ae);
      k.virial[i] = Real(0.5) * lane_sum(aw);
    }
  }

  static STRATA_FORCEINLINE Real lane_sum(const Vec* a) {
    Real v[kLanes];
    for (int l = 0; l < kLanes; ++l) v[l] = a[l / kWidth][l % kWidth];
    return PairForces<Real, Tally>::lane_sum(v);
  }
};

}  // namespace strata::kernels::particles
