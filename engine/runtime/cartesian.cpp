#include "engine/runtime/cartesian.hpp"

#include <string>
#include <utility>

#include "engine/runtime/error.hpp"

namespace strata {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(ExitCode::internal, std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

}  // namespace

Cartesian::Cartesian(MPI_Comm comm, int dims, const std::array<int, 3>& ranks, const std::array<bool, 3>& periodic)
    : dims_(dims), periodic_(periodic) {
  std::array<int, 3> periods{0, 0, 0};
  for (int a = 0; a < dims; ++a) {
    const auto s = static_cast<std::size_t>(a);
    ranks_[s] = ranks[s];
    periods[s] = periodic[s] ? 1 : 0;
  }
  for (int a = dims; a < 3; ++a) periodic_[static_cast<std::size_t>(a)] = false;
  // reorder = 0: a rank keeps its number, so the world communicator and the
  // Cartesian one agree on who is rank 0.
  check(MPI_Cart_create(comm, dims, ranks_.data(), periods.data(), 0, &comm_), "MPI_Cart_create");
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Cart_coords(comm_, rank_, dims, coords_.data()), "MPI_Cart_coords");
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int o[3] = {dx, dy, dz};
        std::array<int, 3> c{0, 0, 0};
        bool inside = true;
        for (int a = 0; a < 3; ++a) {
          const auto s = static_cast<std::size_t>(a);
          c[s] = coords_[s] + o[a];
          if (c[s] >= 0 && c[s] < ranks_[s]) continue;
          if (periodic_[s]) {
            c[s] = (c[s] + ranks_[s]) % ranks_[s];
          } else {
            inside = false;
          }
        }
        neighbours_[static_cast<std::size_t>((dx + 1) + 3 * (dy + 1) + 9 * (dz + 1))] =
            inside ? rank_of(c) : MPI_PROC_NULL;
      }
}

Cartesian::~Cartesian() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Cartesian& Cartesian::operator=(Cartesian&& o) noexcept {
  if (this == &o) return *this;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
  rank_ = o.rank_;
  dims_ = o.dims_;
  ranks_ = o.ranks_;
  coords_ = o.coords_;
  periodic_ = o.periodic_;
  neighbours_ = o.neighbours_;
  return *this;
}

std::array<int, 3> Cartesian::choose(int size, int dims, const std::array<int, 3>& most_first) {
  std::array<int, 3> factors{0, 0, 0}, ranks{1, 1, 1};
  check(MPI_Dims_create(size, dims, factors.data()), "MPI_Dims_create");
  for (int k = 0; k < dims; ++k)
    ranks[static_cast<std::size_t>(most_first[static_cast<std::size_t>(k)])] = factors[static_cast<std::size_t>(k)];
  return ranks;
}

int Cartesian::rank_of(const std::array<int, 3>& c) const {
  int r = 0;
  check(MPI_Cart_rank(comm_, c.data(), &r), "MPI_Cart_rank");
  return r;
}

BlockRange Cartesian::own(int axis, std::int64_t n) const {
  const auto s = static_cast<std::size_t>(axis);
  return block_range(n, coords_[s], ranks_[s]);
}

}  // namespace strata
