// Forces on owned atoms from a full neighbour list (neighbour_list.hpp),
// with, when Tally, each atom's share of the potential energy and of the
// virial: half of each pair's energy and of its r_ij . F_ij, so that the
// sums over owned atoms of all ranks count every pair once. LAMMPS's
// compute pressure uses the same pair virial sum (W = sum_pairs r_ij . F_ij).
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/particles/lennard_jones.hpp"

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

  STRATA_HD STRATA_FORCEINLINE void operator()(std::int64_t i) const {
    const Real xi = x[i], yi = y[i], zi = z[i];
    const int* row = neighbours + i * capacity;
    const int n = count[i];
    Real f0 = 0, f1 = 0, f2 = 0, e = 0, w = 0;
    for (int k = 0; k < n; ++k) {
      const int j = row[k];
      const Real dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
      const Real rsq = dx * dx + dy * dy + dz * dz;
      if (rsq < lj.cutsq) {
        Real fpair, epair;
        lj.evaluate(rsq, fpair, epair);
        f0 += dx * fpair;
        f1 += dy * fpair;
        f2 += dz * fpair;
        if constexpr (Tally) {
          e += epair;
          w += rsq * fpair;
        }
      }
    }
    fx[i] = f0;
    fy[i] = f1;
    fz[i] = f2;
    if constexpr (Tally) {
      energy[i] = Real(0.5) * e;
      virial[i] = Real(0.5) * w;
    }
  }
};

}  // namespace strata::kernels::particles
