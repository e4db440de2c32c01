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
                  (mass.empty() || mass.size() == n) && (image.empty() || image.size() == 3 * n) &&
                  (reference.empty() || reference.size() == 3 * n);
  if (!ok) throw std::logic_error("HostParticles: array sizes do not agree with the particle count");
}

namespace {

template <class T>
std::vector<T> gather(const std::vector<T>& v, const std::vector<std::size_t>& order, std::size_t width) {
  if (v.empty()) return {};
  std::vector<T> out(order.size() * width);
  for (std::size_t k = 0; k < order.size(); ++k)
    for (std::size_t d = 0; d < width; ++d) out[width * k + d] = v[width * order[k] + d];
  return out;
}

}  // namespace

HostParticles HostParticles::permuted(const std::vector<std::size_t>& order) const {
  HostParticles p;
  p.index = gather(index, order, 1);
  p.id = gather(id, order, 1);
  p.position = gather(position, order, 3);
  p.velocity = gather(velocity, order, 3);
  p.mass = gather(mass, order, 1);
  p.reference = gather(reference, order, 3);
  p.image = gather(image, order, 3);
  return p;
}

void HostParticles::sort_by_index() {
  check_sizes();
  if (std::is_sorted(index.begin(), index.end())) return;
  std::vector<std::size_t> order(size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return index[a] < index[b]; });
  *this = permuted(order);
}

Record Record::of(const HostParticles& p) {
  return {!p.id.empty(), !p.mass.empty(), !p.image.empty(), !p.reference.empty()};
}

Record Record::agreed(MPI_Comm comm) const {
  int flags[4] = {id, mass, image, reference};
  MPI_Allreduce(MPI_IN_PLACE, flags, 4, MPI_INT, MPI_MAX, comm);
  return {flags[0] != 0, flags[1] != 0, flags[2] != 0, flags[3] != 0};
}

void Record::pack(const HostParticles& p, std::size_t i, double* rec) const {
  *rec++ = static_cast<double>(p.index[i]);
  if (id) *rec++ = static_cast<double>(p.id[i]);
  for (std::size_t d = 0; d < 3; ++d) *rec++ = p.position[3 * i + d];
  for (std::size_t d = 0; d < 3; ++d) *rec++ = p.velocity[3 * i + d];
  if (mass) *rec++ = p.mass[i];
  if (image)
    for (std::size_t d = 0; d < 3; ++d) *rec++ = p.image[3 * i + d];
  if (reference)
    for (std::size_t d = 0; d < 3; ++d) *rec++ = p.reference[3 * i + d];
}

void Record::unpack(const double* rec, HostParticles& p) const {
  p.index.push_back(static_cast<std::int64_t>(*rec++));
  if (id) p.id.push_back(static_cast<std::int64_t>(*rec++));
  for (int d = 0; d < 3; ++d) p.position.push_back(*rec++);
  for (int d = 0; d < 3; ++d) p.velocity.push_back(*rec++);
  if (mass) p.mass.push_back(*rec++);
  if (image)
    for (int d = 0; d < 3; ++d) p.image.push_back(static_cast<int>(*rec++));
  if (reference)
    for (int d = 0; d < 3; ++d) p.reference.push_back(*rec++);
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

HostParticles route(const MpiContext& mpi, const HostParticles& local, const std::vector<int>& dest) {
  local.check_sizes();
  if (dest.size() != local.size()) throw std::logic_error("particles::route: one destination per particle");
  // Ranks without particles have empty optional arrays: agree on the record.
  const Record record = Record::of(local).agreed(mpi.comm());
  const Record mine = Record::of(local);
  if (local.size() > 0 && (record.id != mine.id || record.mass != mine.mass || record.image != mine.image ||
                           record.reference != mine.reference))
    throw std::logic_error("particles::route: ranks disagree on which optional arrays the particles carry");
  const int width = record.width();
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
  for (std::size_t k = 0; k < local.size(); ++k)
    record.pack(local, k, send.data() + static_cast<std::size_t>(fill[static_cast<std::size_t>(dest[k])]++) * width);
  MPI_Alltoall(send_count.data(), 1, MPI_INT, recv_count.data(), 1, MPI_INT, mpi.comm());
  for (std::size_t r = 1; r < recv_count.size(); ++r) recv_offset[r] = recv_offset[r - 1] + recv_count[r - 1];
  const std::size_t received = static_cast<std::size_t>(recv_offset.back() + recv_count.back());
  std::vector<double> recv(received * static_cast<std::size_t>(width));
  // Counts in records, so int counts reach 2^31 particles per rank.
  MPI_Datatype type;
  MPI_Type_contiguous(width, MPI_DOUBLE, &type);
  MPI_Type_commit(&type);
  MPI_Alltoallv(send.data(), send_count.data(), send_offset.data(), type, recv.data(), recv_count.data(),
                recv_offset.data(), type, mpi.comm());
  MPI_Type_free(&type);

  HostParticles out;
  for (std::size_t k = 0; k < received; ++k) record.unpack(recv.data() + k * static_cast<std::size_t>(width), out);
  out.sort_by_index();
  return out;
}

HostParticles to_even_share(const MpiContext& mpi, const HostParticles& local, std::int64_t n) {
  std::vector<int> dest(local.size());
  for (std::size_t k = 0; k < local.size(); ++k) dest[k] = owner_of(local.index[k], n, mpi.size());
  HostParticles share = route(mpi, local, dest);
  if (static_cast<std::int64_t>(share.size()) != even_share(n, mpi.rank(), mpi.size()).count)
    throw std::logic_error("particles: the particles do not cover the global indices 0..N-1 once");
  return share;
}

}  // namespace strata::particles
