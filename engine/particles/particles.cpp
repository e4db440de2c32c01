#include "engine/particles/particles.hpp"

#include <mpi.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "engine/runtime/mpi_context.hpp"

namespace strata::particles {

void HostParticles::check_sizes() const {
  const std::size_t n = index.size();
  const bool ok = (id.empty() || id.size() == n) && position.size() == 3 * n && velocity.size() == 3 * n &&
                  (mass.empty() || mass.size() == n) && (image.empty() || image.size() == 3 * n);
  if (!ok) throw std::logic_error("HostParticles: array sizes do not agree with the particle count");
}

void HostParticles::push_back_from(const HostParticles& from, std::size_t i) {
  index.push_back(from.index[i]);
  if (!from.id.empty()) id.push_back(from.id[i]);
  for (int d = 0; d < 3; ++d) {
    position.push_back(from.position[3 * i + d]);
    velocity.push_back(from.velocity[3 * i + d]);
    if (!from.image.empty()) image.push_back(from.image[3 * i + d]);
  }
  if (!from.mass.empty()) mass.push_back(from.mass[i]);
}

void HostParticles::sort_by_index() {
  check_sizes();
  if (std::is_sorted(index.begin(), index.end())) return;
  std::vector<std::size_t> order(size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return index[a] < index[b]; });
  HostParticles sorted;
  for (std::size_t k : order) sorted.push_back_from(*this, k);
  *this = std::move(sorted);
}

Share even_share(std::int64_t n, int rank, int ranks) {
  const std::int64_t base = n / ranks, extra = n % ranks, r = rank;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

int owner_of(std::int64_t i, std::int64_t n, int ranks) {
  const std::int64_t base = n / ranks, extra = n % ranks;
  // The first `extra` ranks hold base + 1 items each.
  const std::int64_t split = extra * (base + 1);
  if (i < split) return static_cast<int>(i / (base + 1));
  return static_cast<int>(extra + (i - split) / base);
}

namespace {

// Each particle travels as one record of doubles: index, [id], position,
// velocity, [mass], [image]. Doubles hold ids and indices exactly below 2^53.
struct Layout {
  bool id = false, mass = false, image = false;
  int width() const { return 7 + (id ? 1 : 0) + (mass ? 1 : 0) + (image ? 3 : 0); }
};

}  // namespace

HostParticles route(const MpiContext& mpi, const HostParticles& local, const std::vector<int>& dest) {
  local.check_sizes();
  if (dest.size() != local.size()) throw std::logic_error("particles::route: one destination per particle");
  // Ranks without particles have empty optional arrays: agree on the layout.
  int flags[3] = {local.id.empty() ? 0 : 1, local.mass.empty() ? 0 : 1, local.image.empty() ? 0 : 1};
  MPI_Allreduce(MPI_IN_PLACE, flags, 3, MPI_INT, MPI_MAX, mpi.comm());
  const Layout layout{flags[0] != 0, flags[1] != 0, flags[2] != 0};
  const int width = layout.width();
  const int ranks = mpi.size();

  std::vector<int> send_count(static_cast<std::size_t>(ranks), 0), recv_count(send_count.size());
  for (int d : dest) {
    if (d < 0 || d >= ranks) throw std::logic_error("particles::route: destination out of range");
    ++send_count[static_cast<std::size_t>(d)];
  }
  std::vector<int> send_offset(send_count.size(), 0), recv_offset(send_count.size(), 0);
  for (std::size_t r = 1; r < send_count.size(); ++r) send_offset[r] = send_offset[r - 1] + send_count[r - 1];
  // Pack in destination order, each destination's particles in local order.
  std::vector<double> send(local.size() * static_cast<std::size_t>(width));
  std::vector<int> fill = send_offset;
  for (std::size_t k = 0; k < local.size(); ++k) {
    double* rec = send.data() + static_cast<std::size_t>(fill[static_cast<std::size_t>(dest[k])]++) * width;
    *rec++ = static_cast<double>(local.index[k]);
    if (layout.id) *rec++ = static_cast<double>(local.id[k]);
    for (int d = 0; d < 3; ++d) *rec++ = local.position[3 * k + d];
    for (int d = 0; d < 3; ++d) *rec++ = local.velocity[3 * k + d];
    if (layout.mass) *rec++ = local.mass[k];
    if (layout.image)
      for (int d = 0; d < 3; ++d) *rec++ = local.image[3 * k + d];
  }
  MPI_Alltoall(send_count.data(), 1, MPI_INT, recv_count.data(), 1, MPI_INT, mpi.comm());
  for (std::size_t r = 1; r < recv_count.size(); ++r) recv_offset[r] = recv_offset[r - 1] + recv_count[r - 1];
  const std::size_t received = static_cast<std::size_t>(recv_offset.back() + recv_count.back());
  std::vector<double> recv(received * static_cast<std::size_t>(width));
  // Counts in records, so int counts reach 2^31 particles per rank.
  MPI_Datatype record;
  MPI_Type_contiguous(width, MPI_DOUBLE, &record);
  MPI_Type_commit(&record);
  MPI_Alltoallv(send.data(), send_count.data(), send_offset.data(), record, recv.data(), recv_count.data(),
                recv_offset.data(), record, mpi.comm());
  MPI_Type_free(&record);

  HostParticles out;
  out.index.resize(received);
  if (layout.id) out.id.resize(received);
  out.position.resize(3 * received);
  out.velocity.resize(3 * received);
  if (layout.mass) out.mass.resize(received);
  if (layout.image) out.image.resize(3 * received);
  for (std::size_t k = 0; k < received; ++k) {
    const double* rec = recv.data() + k * static_cast<std::size_t>(width);
    out.index[k] = static_cast<std::int64_t>(*rec++);
    if (layout.id) out.id[k] = static_cast<std::int64_t>(*rec++);
    for (int d = 0; d < 3; ++d) out.position[3 * k + d] = *rec++;
    for (int d = 0; d < 3; ++d) out.velocity[3 * k + d] = *rec++;
    if (layout.mass) out.mass[k] = *rec++;
    if (layout.image)
      for (int d = 0; d < 3; ++d) out.image[3 * k + d] = *rec++;
  }
  out.sort_by_index();
  return out;
}

HostParticles to_even_share(const MpiContext& mpi, const HostParticles& local, std::int64_t n) {
  std::vector<int> dest(local.size());
  for (std::size_t k = 0; k < local.size(); ++k) dest[k] = owner_of(local.index[k], n, mpi.size());
  return route(mpi, local, dest);
}

}  // namespace strata::particles
