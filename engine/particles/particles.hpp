// The particle layer's host-side view of a rank's particles, and the one
// collective that moves particles between ranks. Models keep their working
// arrays on the device in whatever layout their kernels like; they copy to
// a HostParticles for output, checkpoints and start-up, where particles are
// identified by their global index.
//
// Global index: 0..N-1, dense, the row of the particle in every H5MD frame
// and checkpoint (so files are in index order whatever the decomposition).
// The id is what the user sees in /particles/all/id: the index itself, or
// the ids of the file a run started from (then index = rank of the id in
// ascending order, so "atoms sorted by id").
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace strata {
class MpiContext;
}

namespace strata::particles {

// A simulation box. H5MD `boundary` per axis: "periodic" or "none". For a
// periodic box positions lie in [origin, origin + edges); for an open one
// (nbody) edges is only the extent of the initial configuration.
struct Box {
  std::array<double, 3> origin{0, 0, 0};
  std::array<double, 3> edges{1, 1, 1};
  bool periodic = false;
};

// Some of one rank's particles, in any order: the one host form of a
// particle set (HOOMD's ParticleData on the host side), what start-up,
// output and checkpoints work on. position and velocity hold
// 3 values per particle (x, y, z); the optional arrays, when not empty:
// id and mass 1, image 3 (periodic image counts, md's unwrapped
// trajectories), reference 3 (md: the positions its neighbour lists were
// built from).
struct HostParticles {
  std::vector<std::int64_t> index;   // global index, 0..N-1
  std::vector<std::int64_t> id;      // user id; empty: the index
  std::vector<double> position, velocity, mass, reference;
  std::vector<int> image;

  std::size_t size() const { return index.size(); }
  // Checks the arrays' sizes agree (a logic error otherwise).
  void check_sizes() const;
  // Reorders by ascending global index (local only).
  void sort_by_index();
  // The particles order[0], order[1], ... of this set.
  HostParticles permuted(const std::vector<std::size_t>& order) const;
};

// The one record a particle travels in between ranks (LAMMPS's
// AtomVec::pack_exchange/unpack_exchange): doubles, index, [id], position,
// velocity, [mass], [image], [reference]; the optional fields are those
// the particles carry. Doubles hold ids, indices and image counts exactly
// (below 2^53). route() packs with it; md's migration packs the same layout
// on the device (kernels/particles/rebuild.hpp); ghosts travel as positions
// only (kernels/particles/comm_kernels.hpp, pack_comm).
struct Record {
  bool id = false, mass = false, image = false, reference = false;

  // The fields `p` carries (for a set that may be empty on some ranks,
  // agree first: agreed()).
  static Record of(const HostParticles& p);
  // Collective: the union over the ranks of `comm` of the fields carried.
  Record agreed(MPI_Comm comm) const;
  int width() const { return 7 + (id ? 1 : 0) + (mass ? 1 : 0) + (image ? 3 : 0) + (reference ? 3 : 0); }
  // Packs particle i of p into rec[0, width()).
  void pack(const HostParticles& p, std::size_t i, double* rec) const;
  // Appends the particle in rec to p (which carries this record's fields).
  void unpack(const double* rec, HostParticles& p) const;
};

// The even share of N items of rank r among `ranks`: [first, first + count),
// the first N % ranks ranks one longer. 64-bit throughout.
struct Share {
  std::int64_t first = 0, count = 0;
};
Share even_share(std::int64_t n, int rank, int ranks);
// The rank whose even share holds item i.
int owner_of(std::int64_t i, std::int64_t n, int ranks);

// Collective: sends particle k of `local` to rank dest[k] (MPI_Alltoallv);
// returns what this rank received, sorted by global index. All ranks must
// carry the same optional arrays (mass, image, id present or not).
HostParticles route(const MpiContext& mpi, const HostParticles& local, const std::vector<int>& dest);
// Collective: route() to the even share of the global index (what output
// and checkpoints write: rank r then holds exactly even_share(n, r) rows; a
// logic error when `local` of all ranks is not 0..N-1 once).
HostParticles to_even_share(const MpiContext& mpi, const HostParticles& local, std::int64_t n);

}  // namespace strata::particles
