// Checkpoints of particle state (docs/design/particles.md,
// "Checkpoints"): the particles are routed to the even share of
// their global index and each rank writes its block with
// StateWriter::array at its MPI_Exscan offset, so the checkpoint is in
// global-index order, its checksum independent of the decomposition, and a
// restart may use any number of ranks.
//
// Under `prefix`: scalars n, has_id, has_mass, has_image; arrays index [N],
// position and velocity [3N] (x, y, z per particle), id [N] when the
// particles carry user ids, mass [N], image [3N] when present. Values are
// stored as double (exact for FP32 state; ids exact below 2^53). A
// reference (md's build positions) is not part of it: the model saves it
// as it needs.
#pragma once

#include <cstdint>
#include <string>

#include "engine/particles/particles.hpp"

namespace strata {
class StateWriter;
class StateReader;
}  // namespace strata

namespace strata::particles {

// Collective: `local` is this rank's particles, any order; n the global count.
void save_particles(StateWriter& w, const MpiContext& mpi, const std::string& prefix, const HostParticles& local,
                    std::int64_t n);
// Collective: this rank's even share of the global index, sorted; the
// model hands them to their owners with route() (nbody's owners are the
// even share already).
HostParticles restore_particles(StateReader& r, const MpiContext& mpi, const std::string& prefix);

}  // namespace strata::particles
