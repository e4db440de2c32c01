// A 3-D Cartesian decomposition of the ranks of a communicator (MPI_Cart_create
// without reordering, so a rank keeps its number): ranks and periodicity per
// axis, this rank's coordinates, its 26 neighbours, its own block of a
// global count. The grids (engine/grid) and md's periodic box
// (models/md/domain.hpp) are both cut with it. A 2-D decomposition has one
// rank along z.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <utility>

#include "engine/runtime/tree_sum.hpp"

namespace strata {

class Cartesian {
 public:
  Cartesian() = default;
  // Collective over `comm`. ranks[a] > 0 for a < dims, their product the
  // size of comm. Throws Error (internal) when MPI refuses.
  Cartesian(MPI_Comm comm, int dims, const std::array<int, 3>& ranks, const std::array<bool, 3>& periodic);
  ~Cartesian();
  Cartesian& operator=(Cartesian&& o) noexcept {   // o frees what this held
    std::swap(comm_, o.comm_);
    rank_ = o.rank_;
    ranks_ = o.ranks_;
    coords_ = o.coords_;
    neighbours_ = o.neighbours_;
    return *this;
  }
  Cartesian(const Cartesian&) = delete;
  Cartesian& operator=(const Cartesian&) = delete;

  // MPI_Dims_create's factors of `size` over `dims` axes (non-increasing)
  // given to the axes in the order of `most_first` (its first `dims`
  // entries a permutation of the axes 0..dims-1: the first gets the most
  // ranks); 1 on the axes beyond dims.
  static std::array<int, 3> choose(int size, int dims, const std::array<int, 3>& most_first);

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  const std::array<int, 3>& ranks() const { return ranks_; }     // per axis; 1 beyond dims
  const std::array<int, 3>& coords() const { return coords_; }   // this rank's; 0 beyond dims
  // The rank at offset (dx, dy, dz) in {-1, 0, 1}^3 (periodic axes wrap;
  // may be this rank), or MPI_PROC_NULL beyond a non-periodic side or along
  // an axis beyond dims.
  int neighbour(int dx, int dy, int dz) const {
    return neighbours_[static_cast<std::size_t>((dx + 1) + 3 * (dy + 1) + 9 * (dz + 1))];
  }
  int lower(int axis) const { return neighbour(axis == 0 ? -1 : 0, axis == 1 ? -1 : 0, axis == 2 ? -1 : 0); }
  int upper(int axis) const { return neighbour(axis == 0 ? 1 : 0, axis == 1 ? 1 : 0, axis == 2 ? 1 : 0); }
  // The rank at grid coordinates c (each within [0, ranks)).
  int rank_of(const std::array<int, 3>& c) const;
  // This rank's block of n items along `axis` (block_range: the first n %
  // ranks blocks one longer).
  BlockRange own(int axis, std::int64_t n) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  std::array<int, 3> ranks_{1, 1, 1}, coords_{0, 0, 0};
  std::array<int, 27> neighbours_{};
};

}  // namespace strata
