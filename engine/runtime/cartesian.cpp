#include "engine/runtime/cartesian.hpp"

#include <string>

#include "engine/runtime/mpi_context.hpp"

namespace strata {

Cartesian::Cartesian(MPI_Comm comm, int dims, const std::array<int, 3>& ranks, const std::array<bool, 3>& periodic) {
  std::array<int, 3> periods{0, 0, 0};
  for (std::size_t a = 0; a < static_cast<std::size_t>(dims); ++a) {
    ranks_[a] = ranks[a];
    periods[a] = periodic[a] ? 1 : 0;
  }
  // reorder = 0: a rank keeps its number, so the world communicator and the
  // Cartesian one agree on who is rank 0.
  throw_mpi(MPI_Cart_create(comm, dims, ranks_.data(), periods.data(), 0, &comm_), "MPI_Cart_create");
  throw_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  throw_mpi(MPI_Cart_coords(comm_, rank_, dims, coords_.data()), "MPI_Cart_coords");
  for (std::size_t code = 0; code < neighbours_.size(); ++code) {
    std::array<int, 3> c{0, 0, 0};
    bool inside = true;
    for (std::size_t a = 0, step = 1; a < 3; ++a, step *= 3) {
      c[a] = coords_[a] + static_cast<int>(code / step % 3) - 1;
      if (c[a] < 0 || c[a] >= ranks_[a]) {
        inside = inside && periods[a] != 0;
        c[a] = (c[a] + ranks_[a]) % ranks_[a];
      }
    }
    neighbours_[code] = inside ? rank_of(c) : MPI_PROC_NULL;
  }
}

Cartesian::~Cartesian() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::array<int, 3> Cartesian::choose(int size, int dims, const std::array<int, 3>& most_first) {
  std::array<int, 3> factors{0, 0, 0}, ranks{1, 1, 1};
  throw_mpi(MPI_Dims_create(size, dims, factors.data()), "MPI_Dims_create");
  for (int k = 0; k < dims; ++k)
    ranks[static_cast<std::size_t>(most_first[static_cast<std::size_t>(k)])] = factors[static_cast<std::size_t>(k)];
  return ranks;
}

int Cartesian::rank_of(const std::array<int, 3>& c) const {
  int r = 0;
  throw_mpi(MPI_Cart_rank(comm_, c.data(), &r), "MPI_Cart_rank");
  return r;
}

BlockRange Cartesian::own(int axis, std::int64_t n) const {
  const auto s = static_cast<std::size_t>(axis);
  return block_range(n, coords_[s], ranks_[s]);
}

}  // namespace strata
