// Thermodynamics in LAMMPS's conventions for `thermo_style one` in
// `units lj` (compute temp, compute pe, compute pressure; thermo_modify
// norm yes, the lj default), with unit masses and k_B = 1:
//   T     = sum m v^2 / dof,  dof = 3N - 3 (the centre of mass fixed)
//   E_pair = PE / N,  TotEng = (PE + KE) / N,  KE = sum m v^2 / 2
//   Press = (dof T + W) / (3 V),  W = sum over pairs of r_ij . F_ij
// Sums over atoms are exact (kernels/particles/atom_sums.hpp), so the
// values do not depend on the decomposition, thread count or atom order.
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "models/md/kernels.hpp"
#include "engine/runtime/fixed_sum.hpp"
#include "kernels/particles/atom_sums.hpp"
#include "kernels/particles/neighbour_list.hpp"

namespace strata::md {

struct Thermo {
  double temperature = 0, pe = 0, ke = 0, etotal = 0, pressure = 0;   // energies per atom
  double momentum[3] = {0, 0, 0};                                      // total, sum m v
  double virial = 0;                                                   // W, whole system
};

// From the whole system's sums: sum v^2, PE, W and momentum; N atoms in volume V.
inline Thermo thermo_from_sums(double v2, double pe, double w, const double* momentum, std::int64_t n,
                               double volume) {
  Thermo t;
  const double natoms = static_cast<double>(n);
  const double dof = 3.0 * natoms - 3.0;
  t.temperature = dof > 0 ? v2 / dof : 0.0;
  t.ke = 0.5 * v2 / natoms;
  t.pe = pe / natoms;
  t.etotal = t.pe + t.ke;
  t.pressure = (dof * t.temperature + w) / (3.0 * volume);
  t.virial = w;
  for (int a = 0; a < 3; ++a) t.momentum[a] = momentum[a];
  return t;
}

}  // namespace strata::md
