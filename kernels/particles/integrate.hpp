// Velocity Verlet (NVE) as LAMMPS's fix nve splits it, with unit masses
// (LJ reduced units, m = 1):
//   initial: v += dt/2 f;  x += dt v        (KickDrift)
//   forces at the new x
//   final:   v += dt/2 f                    (Kick)
// and the Langevin thermostat's force (Schneider and Stoll, Phys. Rev. B 17
// (1978) 1302; as LAMMPS's fix langevin adds it after the pair forces):
//   f += -(m / damp) v + sqrt(2 m k_B T / (damp dt)) xi,   xi ~ N(0, 1)
// with xi from Philox keyed by (seed, atom id, step): the same atom gets the
// same noise on any number of ranks or threads.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/rng/normal.hpp"
#include "kernels/rng/philox.hpp"

namespace strata::kernels::particles {

template <class Real>
struct KickDrift {
  Real *x, *y, *z, *vx, *vy, *vz;
  const Real *fx, *fy, *fz;
  Real dt, half_dt;
  STRATA_HD void operator()(std::int64_t i) const {
    vx[i] += half_dt * fx[i];
    vy[i] += half_dt * fy[i];
    vz[i] += half_dt * fz[i];
    x[i] += dt * vx[i];
    y[i] += dt * vy[i];
    z[i] += dt * vz[i];
  }
};

template <class Real>
struct Kick {
  Real *vx, *vy, *vz;
  const Real *fx, *fy, *fz;
  Real half_dt;
  STRATA_HD void operator()(std::int64_t i) const {
    vx[i] += half_dt * fx[i];
    vy[i] += half_dt * fy[i];
    vz[i] += half_dt * fz[i];
  }
};

template <class Real>
struct LangevinForce {
  const Real *vx, *vy, *vz;
  const std::int64_t* id;
  Real *fx, *fy, *fz;
  rng::PhiloxKey key;
  std::uint64_t step;
  Real gamma;      // m / damp
  Real strength;   // sqrt(2 m k_B T / (damp dt))
  STRATA_HD void operator()(std::int64_t i) const {
    // Two calls of two double normals each: (atom id, 2 step) and (atom id, 2 step + 1).
    double xi[4];
    const auto sub = static_cast<std::uint64_t>(id[i]);
    rng::philox_normals<double>(key, sub, 2 * step, xi);
    rng::philox_normals<double>(key, sub, 2 * step + 1, xi + 2);
    fx[i] += -gamma * vx[i] + strength * static_cast<Real>(xi[0]);
    fy[i] += -gamma * vy[i] + strength * static_cast<Real>(xi[1]);
    fz[i] += -gamma * vz[i] + strength * static_cast<Real>(xi[2]);
  }
};

}  // namespace strata::kernels::particles
