// Forces on owned atoms from a full neighbour list (neighbour_list.hpp),
// with, when Tally, each atom's share of the potential energy and of the
// virial: half of each pair's energy and of its r_ij . F_ij, so that the
// sums over owned atoms of all ranks count every pair once. LAMMPS's
// compute pressure uses the same pair virial sum (W = sum_pairs r_ij . F_ij).
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/particles/lennard_jones.hpp"
#include "kernels/particles/neighbour_list.hpp"

namespace strata::kernels::particles {

template <class Real, bool Tally>
struct PairForces {
  const Real *x, *y, *z;
  const int* neighbours;
  const int* count;
  std::int64_t capacity;
  LennardJones<Real> lj;
  Real *fx, *fy, *fz;
  Real *energy, *virial;   // per owned atom; written only when Tally

  // The neighbours are taken kLanes at a time: their distances are
  // gathered into small local arrays, then evaluated lane by lane with one
  // partial sum per lane (neighbour k goes to lane k % kLanes), and the
  // lanes are combined pairwise at the end. The host compiler turns the
  // lane loop into vector instructions; the summation order is fixed by
  // this code alone, the same for every vector width, thread count and
  // backend. Pairs beyond the cutoff (inside the skin) and the padding of
  // the last group weigh 0: no branches.
  static constexpr int kLanes = kRowPad;

  STRATA_HD STRATA_FORCEINLINE void operator()(std::int64_t i) const {
    const Real xi = x[i], yi = y[i], zi = z[i];
    const int* const row = neighbours + i * capacity;
    const int n = count[i];
    const LennardJones<Real> p = lj;
    Real a0[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {}, ae[kLanes] = {}, aw[kLanes] = {};
    for (int k0 = 0; k0 < n; k0 += kLanes) {
      Real dx[kLanes], dy[kLanes], dz[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        const int j = row[k0 + l];   // rows are padded with i to a multiple of kLanes
        dx[l] = xi - x[j];
        dy[l] = yi - y[j];
        dz[l] = zi - z[j];
      }
      for (int l = 0; l < kLanes; ++l) {
        const Real rsq = dx[l] * dx[l] + dy[l] * dy[l] + dz[l] * dz[l];
        // The padding (atom i itself: rsq = 0) is excluded here.
        const bool inside = (rsq < p.cutsq) & (rsq > Real(0));
        Real fpair, epair;
        p.evaluate(inside ? rsq : Real(1), fpair, epair);
        fpair = inside ? fpair : Real(0);
        a0[l] += dx[l] * fpair;
        a1[l] += dy[l] * fpair;
        a2[l] += dz[l] * fpair;
        if constexpr (Tally) {
          ae[l] += inside ? epair : Real(0);
          aw[l] += rsq * fpair;
        }
      }
    }
    fx[i] = lane_sum(a0);
    fy[i] = lane_sum(a1);
    fz[i] = lane_sum(a2);
    if constexpr (Tally) {
      energy[i] = Real(0.5) * lane_sum(ae);
      virial[i] = Real(0.5) * lane_sum(aw);
    }
  }

  STRATA_HD static STRATA_FORCEINLINE Real lane_sum(const Real* a) {
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  }
};

}  // namespace strata::kernels::particles
