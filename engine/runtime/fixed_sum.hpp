// The last step of the exact sums (grid::global_sum, md's atom sums): each
// rank's 128-bit fixed-point partial, all-gathered and added in rank order
// (integer addition, so any order gives the same bits), then scaled back
// by 2^-shift. Collective over `comm`.
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/core/exact_sum.hpp"

namespace strata {

inline double fixed128_sum_over_ranks(MPI_Comm comm, kernels::Fixed128 local, int shift) {
  using kernels::Fixed128;
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  std::uint64_t mine[2] = {local.lo, static_cast<std::uint64_t>(local.hi)};
  std::vector<std::uint64_t> all(2 * static_cast<std::size_t>(ranks));
  MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, comm);
  Fixed128 total;
  for (std::size_t r = 0; r < all.size(); r += 2) {
    Fixed128 part;
    part.lo = all[r];
    part.hi = static_cast<std::int64_t>(all[r + 1]);
    total = total + part;
  }
  return std::ldexp(total.to_double(), -shift);
}

}  // namespace strata
