// Exact global reductions of a per-item value f(idx), idx in [0, n) on
// each rank (grid cells, atoms): the maximum, NaN kept, and the exact sum.
// The sum quantises every value to a common power-of-two scale (2^-62 of
// the largest |value| over all ranks) and adds them as 128-bit integers,
// on the device and then over the ranks in rank order; integer addition
// is associative, so the result is the same bit for bit for any
// decomposition, thread count and backend, and within n 2^-62 max|f| of
// the exact sum. Collective over `comm`. On CUDA the model's *.cu file
// instantiates parallel_reduce for Magnitude<F> with MaxOp and
// Quantised<F> with Fixed128Plus (kernels/core/exact_sum.hpp).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/backend/parallel.hpp"
#include "kernels/core/exact_sum.hpp"

namespace strata {

// Each rank's 128-bit fixed-point partial, all-gathered and added in rank
// order, then scaled back by 2^-shift.
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

// The maximum of f over every rank's items, `init` where there are none;
// NaN when any value is NaN (MPI_MAX drops NaN on some implementations,
// so "any NaN" travels separately).
template <class F>
double max_over_ranks(const Device& device, MPI_Comm comm, std::int64_t n, const F& f,
                 double init = -std::numeric_limits<double>::infinity()) {
  const double local = parallel_reduce(device, n, f, init, kernels::MaxOp{});
  int nan_local = std::isnan(local) ? 1 : 0, nan = 0;
  MPI_Allreduce(&nan_local, &nan, 1, MPI_INT, MPI_LOR, comm);
  if (nan != 0) return std::numeric_limits<double>::quiet_NaN();
  double m = local;
  MPI_Allreduce(&local, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
  return m;
}

// The exact sum of f over every rank's items; NaN when any value is not
// finite, 0 when every value is 0 or there are none.
template <class F>
double exact_sum_over_ranks(const Device& device, MPI_Comm comm, std::int64_t n, const F& f) {
  const double m = max_over_ranks(device, comm, n, kernels::Magnitude<F>{f, {}}, 0.0);
  if (!std::isfinite(m)) return std::numeric_limits<double>::quiet_NaN();
  if (m == 0) return 0.0;
  int e = 0;
  std::frexp(m, &e);   // m < 2^e, so each term is below 2^62: 2^65 of them fit the 128-bit sum
  const int shift = std::min(62 - e, 1000);   // 2^1000 and 2^-1000 stay finite doubles
  const kernels::Fixed128 local = parallel_reduce(device, n, kernels::Quantised<F>{f, {std::ldexp(1.0, shift)}},
                                                  kernels::Fixed128{}, kernels::Fixed128Plus{});
  return fixed128_sum_over_ranks(comm, local, shift);
}

}  // namespace strata
