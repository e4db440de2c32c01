// md's starting configurations, as each rank's owned atoms.
#pragma once

#include "models/md/atom_system.hpp"
#include "models/md/params.hpp"

namespace strata::md {

// The fcc lattice of p.cells unit cells (LAMMPS's `lattice fcc RHO`: basis
// (0,0,0), (1/2,1/2,0), (1/2,0,1/2), (0,1/2,1/2) times a = (4/RHO)^(1/3)),
// atom index ((k ny + j) nx + i) 4 + b. Velocities Maxwell-Boltzmann at
// p.temperature (each component N(0, T), unit mass) from Philox keyed by
// (seed, atom index), then the centre-of-mass velocity removed and all
// rescaled so that T (3N - 3 degrees of freedom) is exactly p.temperature.
// Only the atoms in this rank's sub-box are made.
HostParticles fcc_lattice(const Params& p, const Domain& domain);

}  // namespace strata::md
