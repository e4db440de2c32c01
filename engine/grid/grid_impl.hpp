// Template definitions of engine/grid/grid.hpp (included from it).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "engine/runtime/fixed_sum.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/watchdog.hpp"

namespace strata::grid {

namespace detail {

template <class T>
MPI_Datatype mpi_type() {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>, "halo exchange of double or float");
  return std::is_same_v<T, double> ? MPI_DOUBLE : MPI_FLOAT;
}

// The components of `f` as the halo messages' FieldSet (Pack only reads them).
template <class T>
kernels::grid::FieldSet<T> components(Field<T>& f) {
  if (f.ncomp() > kernels::grid::kMaxFields) throw std::logic_error("grid: a field of more than kMaxFields components");
  kernels::grid::FieldSet<T> set;
  set.layout = f.view().component(0);
  for (int c = 0; c < f.ncomp(); ++c) set.origin[c] = f.view().component(c).origin;
  set.count = f.ncomp();
  return set;
}

inline int direction_code(int dx, int dy, int dz) { return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1); }

// The owned cells next to the face/edge/corner in direction o (what goes to
// the neighbour there), and the halo cells beyond it (what comes back).
inline void link_boxes(const Grid& g, const int o[3], Box& send, Box& recv) {
  const auto n = g.count();
  for (int a = 0; a < 3; ++a) {
    const index_t h = g.halo(a);
    if (o[a] == 0) {
      send.lo[a] = recv.lo[a] = 0;
      send.n[a] = recv.n[a] = n[a];
    } else {
      send.n[a] = recv.n[a] = h;
      send.lo[a] = o[a] < 0 ? 0 : n[a] - h;
      recv.lo[a] = o[a] < 0 ? -h : n[a];
    }
  }
}

}  // namespace detail

template <class T>
HaloExchange<T>::HaloExchange(const Grid& g, const Device& device, int max_fields, Timers* timers)
    : grid_(g), device_(device), max_fields_(max_fields), timers_(timers) {
  if (max_fields < 1 || max_fields > kernels::grid::kMaxFields)
    throw std::logic_error("HaloExchange: 1 to kMaxFields fields");
  // Where the messages' bytes travel from, not which kernels run: MPI
  // reads device memory itself when it is CUDA-aware; otherwise the packed
  // buffers are staged through host copies. The pack and unpack kernels
  // are the same either way (parallel_for picks their backend).
  staged_ = device.on_cuda() && !mpi_cuda_aware();
  // A periodic axis this rank spans alone is its own neighbour on both
  // sides: its halos are wrapped copies (begin()), axis by axis, each slab
  // over the halos of the axes wrapped before it, so every direction whose
  // offsets lie on such axes only is covered, edges and corners included.
  const auto n = g.count();
  bool* const self = wrapped_;
  for (int a = 0; a < g.dims(); ++a) {
    int o[3] = {0, 0, 0};
    o[a] = 1;
    // The Cartesian communicator keeps MpiContext's numbering (reorder = 0).
    self[a] = g.neighbour(o[0], o[1], o[2]) == g.mpi().rank();
    if (!self[a]) continue;
    Box low = g.owned();
    for (int b = 0; b < a; ++b)
      if (self[b]) {
        low.lo[b] = -g.halo(b);
        low.n[b] = n[b] + 2 * g.halo(b);
      }
    low.lo[a] = -g.halo(a);
    low.n[a] = g.halo(a);
    wrap_axis_[wraps_.count] = a;
    wraps_.add(low);
  }
  const int zr = g.dims() == 3 ? 1 : 0;
  for (int dz = -zr; dz <= zr; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0 && dz == 0) continue;
        const int rank = g.neighbour(dx, dy, dz);
        if (rank == MPI_PROC_NULL) continue;
        const int o[3] = {dx, dy, dz};
        if ((o[0] == 0 || self[0]) && (o[1] == 0 || self[1]) && (o[2] == 0 || self[2])) continue;   // wrapped
        Link link{rank, detail::direction_code(dx, dy, dz), detail::direction_code(-dx, -dy, -dz), {}, {}, cells_};
        detail::link_boxes(g, o, link.send, link.recv);
        cells_ += static_cast<std::size_t>(link.send.size());
        links_.push_back(link);
        sends_.add(link.send);
        receives_.add(link.recv);
      }
  const std::size_t total = cells_ * static_cast<std::size_t>(max_fields);
  send_dev_ = Buffer<T>(device, total);
  recv_dev_ = Buffer<T>(device, total);
  if (staged_) {
    send_host_.resize(total);
    recv_host_.resize(total);
  }
  requests_.reserve(2 * links_.size());
}

template <class T>
HaloExchange<T>::~HaloExchange() {
  if (!requests_.empty()) MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
}

template <class T>
void HaloExchange<T>::begin(std::initializer_list<Field<T>*> fields, bool wrap) {
  if (!requests_.empty()) throw std::logic_error("HaloExchange::begin twice without end");
  pending_.count = 0;
  for (Field<T>* f : fields)
    for (int c = 0; c < f->ncomp(); ++c) {
      if (pending_.count == max_fields_) throw std::logic_error("HaloExchange: too many fields");
      pending_.layout = f->view().component(0);
      pending_.origin[pending_.count++] = f->view().component(c).origin;
    }
  const std::size_t nf = static_cast<std::size_t>(pending_.count);
  if (nf == 0) return;
  if (wrap && wraps_.count > 0) {
    const auto n = grid_.count();
    kernels::grid::PeriodicWrap<T> wrap{pending_, {wrap_axis_[0], wrap_axis_[1], wrap_axis_[2]},
                                        {n[0], n[1], n[2]}, {grid_.halo(0), grid_.halo(1), grid_.halo(2)},
                                        {wrapped_[0], wrapped_[1], wrapped_[2]}};
    for_boxes(device_, wraps_, wrap, pending_.count);
  }
  if (links_.empty()) return;
  kernels::grid::Pack<T> pack{pending_, send_dev_.data(), {}};
  for (std::size_t b = 0; b < links_.size(); ++b)
    pack.offset[b] = static_cast<index_t>(links_[b].offset * nf);
  for_boxes(device_, sends_, pack, pending_.count);
  T* send = send_dev_.data();
  T* recv = recv_dev_.data();
  if (staged_) {
    send_dev_.copy_to_host(send_host_.data(), cells_ * nf);   // waits for the pack kernels
    send = send_host_.data();
    recv = recv_host_.data();
  } else {
    device_.fence();   // MPI reads the packed buffers
  }
  // Every receive posted before any send; a link's send and receive boxes
  // have the same size.
  std::optional<Timers::Scope> timed;
  if (timers_ != nullptr) timed.emplace(*timers_, "halo_exchange");
  for (const bool receive : {true, false})
    for (const Link& l : links_) {
      const int count = static_cast<int>(static_cast<std::size_t>(l.send.size()) * nf);
      MPI_Request rq;
      throw_mpi(receive ? MPI_Irecv(recv + l.offset * nf, count, detail::mpi_type<T>(), l.rank, l.recv_tag,
                                            grid_.cart(), &rq)
                                : MPI_Isend(send + l.offset * nf, count, detail::mpi_type<T>(), l.rank, l.send_tag,
                                            grid_.cart(), &rq),
                        receive ? "MPI_Irecv (halo)" : "MPI_Isend (halo)");
      requests_.push_back(rq);
    }
}

template <class T>
void HaloExchange<T>::end() {
  if (requests_.empty()) return;
  {
    std::optional<Timers::Scope> timed;
    if (timers_ != nullptr) timed.emplace(*timers_, "halo_exchange");
    // One request at a time, receives first (begin()'s order), so that the
    // watchdog can name the neighbour a hung exchange waits for; MPI
    // progresses all of them during each wait, as MPI_Waitall would.
    watchdog::PhaseScope phase(watchdog::Phase::halo, links_.front().rank);
    for (std::size_t r = 0; r < requests_.size(); ++r) {
      watchdog::set_peer(links_[r % links_.size()].rank);
      throw_mpi(MPI_Wait(&requests_[r], MPI_STATUS_IGNORE), "MPI_Wait (halo)");
    }
  }
  requests_.clear();
  const std::size_t nf = static_cast<std::size_t>(pending_.count);
  if (staged_) recv_dev_.copy_from_host(recv_host_.data(), cells_ * nf);
  kernels::grid::Unpack<T> unpack{pending_, recv_dev_.data(), {}};
  for (std::size_t b = 0; b < links_.size(); ++b)
    unpack.offset[b] = static_cast<index_t>(links_[b].offset * nf);
  for_boxes(device_, receives_, unpack, pending_.count);
}

template <class T>
void fill_side(const Grid& g, const Device& device, Field<T>& f, int axis, int side, T sign) {
  if (!g.physical(axis, side)) return;
  const Boundary kind = g.boundary(axis, side);
  const auto n = g.count();
  Box box = g.stored();   // the halo slab beyond the side, over the other axes' halos
  box.lo[axis] = side == 0 ? -g.halo(axis) : n[axis];
  box.n[axis] = g.halo(axis);
  for_box(device, box,
          kernels::grid::FillSide<T>{f.view(), axis, n[axis], side, kind == Boundary::wall,
                                     kind == Boundary::wall ? sign : T(1)});
}

template <class T>
void fill_boundaries(const Grid& g, const Device& device, Field<T>& f, std::array<T, 3> sign) {
  for (int a = 0; a < g.dims(); ++a)
    for (int s = 0; s < 2; ++s) fill_side(g, device, f, a, s, sign.at(a));
}

template <class F>
double global_max(const Grid& g, const Device& device, const F& f) {
  const Box box = g.owned();
  return max_over_ranks(device, g.mpi().comm(), box.size(), kernels::grid::BoxValue<F>{box, f});
}

template <class F>
double global_sum(const Grid& g, const Device& device, const F& f) {
  const Box box = g.owned();
  return exact_sum_over_ranks(device, g.mpi().comm(), box.size(), kernels::grid::BoxValue<F>{box, f});
}

template <class T>
void pack_owned(const Grid& g, const Device& device, const Field<T>& f, T* to) {
  const kernels::grid::FieldSet<T> set = detail::components(const_cast<Field<T>&>(f));
  for_box(device, g.owned(), kernels::grid::SingleBox<kernels::grid::Pack<T>>{{set, to, {}}, g.owned()}, set.count);
}

template <class T>
void unpack_owned(const Grid& g, const Device& device, const T* from, Field<T>& f) {
  const kernels::grid::FieldSet<T> set = detail::components(f);
  for_box(device, g.owned(), kernels::grid::SingleBox<kernels::grid::Unpack<T>>{{set, from, {}}, g.owned()},
          set.count);
}

template <class T>
std::vector<double> owned_values(const Grid& g, const Device& device, const Field<T>& f, int c) {
  const std::size_t cells = static_cast<std::size_t>(g.owned_cells());
  Buffer<T> packed(device, cells * static_cast<std::size_t>(f.ncomp()));
  pack_owned(g, device, f, packed.data());
  std::vector<T> mine(cells);
  packed.copy_to_host(mine.data(), cells, {}, static_cast<std::size_t>(c) * cells);
  return {mine.begin(), mine.end()};
}

namespace detail {
// Global shape and this rank's box, slowest axis first ({nz,} ny, nx).
struct GlobalBox {
  std::vector<std::int64_t> shape, start, count;
};
inline GlobalBox global_box(const Grid& g) {
  GlobalBox b;
  for (int a = g.dims() - 1; a >= 0; --a) {
    b.shape.push_back(g.spec().n.at(a));
    b.start.push_back(g.start()[a]);
    b.count.push_back(g.count()[a]);
  }
  return b;
}
}  // namespace detail

template <class T>
void save_field(StateWriter& w, const Grid& g, const Device& device, const Field<T>& f) {
  const detail::GlobalBox b = detail::global_box(g);
  for (int c = 0; c < f.ncomp(); ++c)
    w.box("fields/" + f.name(c), owned_values(g, device, f, c), b.shape, b.start, b.count);
}

template <class T>
void restore_field(StateReader& r, const Grid& g, const Device& device, Field<T>& f) {
  const detail::GlobalBox b = detail::global_box(g);
  const std::size_t cells = static_cast<std::size_t>(g.owned_cells());
  std::vector<double> values(cells);
  std::vector<T> owned(cells * static_cast<std::size_t>(f.ncomp()));
  for (int c = 0; c < f.ncomp(); ++c) {
    r.box("fields/" + f.name(c), values, b.start, b.count);
    std::transform(values.begin(), values.end(), owned.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(c) * cells),
                   [](double v) { return static_cast<T>(v); });
  }
  Buffer<T> packed(device, owned.size());
  packed.copy_from_host(owned.data(), owned.size());
  unpack_owned(g, device, packed.data(), f);
}

}  // namespace strata::grid
