// Template definitions of engine/grid/grid.hpp (included from it).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <vector>

#include "engine/runtime/fixed_sum.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/simulation.hpp"

namespace strata::grid {

namespace detail {

template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}
template <>
inline MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
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

void throw_mpi(int rc, const char* what);

// Calls row(field, j, k) for every row of `box` in each of `fields` fields
// on the host: OpenMP over rows when they are long, over planes (field, k)
// when they are short (a face normal to x: rows of one or two cells, where
// a division per row would cost more than the row).
template <class R>
void host_rows(const Box& box, int fields, const R& row) {
  if (box.size() <= 0 || fields <= 0) return;
  const index_t n1 = box.n[1], n2 = box.n[2];
  if (box.n[0] >= 16) {
    host::parallel_for(fields * n1 * n2, [&](index_t r) {
      const index_t plane = r / n1;
      row(static_cast<int>(plane / n2), box.lo[1] + r % n1, box.lo[2] + plane % n2);
    });
  } else {
    host::parallel_for(fields * n2, [&](index_t plane) {
      const int field = static_cast<int>(plane / n2);
      const index_t k = box.lo[2] + plane % n2;
      for (index_t j = box.lo[1]; j < box.lo[1] + n1; ++j) row(field, j, k);
    });
  }
}

}  // namespace detail

template <class T>
HaloExchange<T>::HaloExchange(const Grid& g, const Device& device, int max_fields)
    : grid_(g), device_(device), max_fields_(max_fields) {
  if (max_fields < 1 || max_fields > kernels::stencil::kMaxFields)
    throw std::logic_error("HaloExchange: 1 to kMaxFields fields");
  direct_ = device.backend == Backend::cuda && mpi_cuda_aware();
  // A periodic axis this rank spans alone is its own neighbour on both
  // sides: its halos are wrapped copies (begin()), axis by axis, each slab
  // over the halos of the axes wrapped before it, so every direction whose
  // offsets lie on such axes only is covered, edges and corners included.
  const auto n = g.count();
  std::array<bool, 3> self{false, false, false};
  for (int a = 0; a < g.dims(); ++a) {
    int o[3] = {0, 0, 0};
    o[a] = 1;
    const auto s = static_cast<std::size_t>(a);
    // The Cartesian communicator keeps MpiContext's numbering (reorder = 0).
    self[s] = g.neighbour(o[0], o[1], o[2]) == g.mpi().rank();
    if (!self[s]) continue;
    Wrap w{g.owned(), a, n[s]};
    for (int b = 0; b < a; ++b)
      if (self[static_cast<std::size_t>(b)]) {
        w.low.lo[b] = -g.halo(b);
        w.low.n[b] = n[static_cast<std::size_t>(b)] + 2 * g.halo(b);
      }
    w.low.lo[a] = -g.halo(a);
    w.low.n[a] = g.halo(a);
    wraps_.push_back(w);
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
      }
  const std::size_t total = cells_ * static_cast<std::size_t>(max_fields);
  send_dev_ = Buffer<T>(device, total);
  recv_dev_ = Buffer<T>(device, total);
  if (device.backend == Backend::cuda && !direct_) {
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
void HaloExchange<T>::begin(std::initializer_list<Field<T>*> fields) {
  if (!requests_.empty()) throw std::logic_error("HaloExchange::begin twice without end");
  if (static_cast<int>(fields.size()) > max_fields_) throw std::logic_error("HaloExchange: too many fields");
  pending_.count = 0;
  for (Field<T>* f : fields) pending_.f[pending_.count++] = f->view();
  const std::size_t nf = static_cast<std::size_t>(pending_.count);
  if (nf == 0) return;
  for (const Wrap& w : wraps_) {
    if (device_.backend == Backend::cuda) {
      parallel_for(device_, w.low.size() * pending_.count, kernels::stencil::PeriodicWrap<T>{pending_, w.low, w.axis, w.n});
    } else {
      detail::host_rows(w.low, pending_.count, kernels::stencil::PeriodicWrapRow<T>{pending_, w.low, w.axis, w.n});
    }
  }
  if (links_.empty()) return;
  for (const Link& l : links_) {
    T* buffer = send_dev_.data() + l.offset * nf;
    if (device_.backend == Backend::cuda) {
      parallel_for(device_, l.send.size() * pending_.count, kernels::stencil::PackBox<T>{pending_, l.send, buffer});
    } else {
      detail::host_rows(l.send, pending_.count, kernels::stencil::PackRow<T>{pending_, l.send, buffer});
    }
  }
  T* send = send_dev_.data();
  T* recv = recv_dev_.data();
  if (device_.backend == Backend::cuda && !direct_) {
    send_dev_.copy_to_host(send_host_.data(), cells_ * nf);   // synchronises with the pack kernels
    send = send_host_.data();
    recv = recv_host_.data();
  } else if (device_.backend == Backend::cuda) {
    cuda::synchronize();
  }
  for (const Link& l : links_) {
    const int count = static_cast<int>(static_cast<std::size_t>(l.recv.size()) * nf);
    MPI_Request rq;
    detail::throw_mpi(MPI_Irecv(recv + l.offset * nf, count, detail::mpi_type<T>(), l.rank, l.recv_tag, grid_.cart(),
                                &rq),
                      "MPI_Irecv (halo)");
    requests_.push_back(rq);
  }
  for (const Link& l : links_) {
    const int count = static_cast<int>(static_cast<std::size_t>(l.send.size()) * nf);
    MPI_Request rq;
    detail::throw_mpi(MPI_Isend(send + l.offset * nf, count, detail::mpi_type<T>(), l.rank, l.send_tag, grid_.cart(),
                                &rq),
                      "MPI_Isend (halo)");
    requests_.push_back(rq);
  }
}

template <class T>
void HaloExchange<T>::end() {
  if (requests_.empty()) return;
  detail::throw_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
                    "MPI_Waitall (halo)");
  requests_.clear();
  const std::size_t nf = static_cast<std::size_t>(pending_.count);
  if (device_.backend == Backend::cuda && !direct_) recv_dev_.copy_from_host(recv_host_.data(), cells_ * nf);
  for (const Link& l : links_) {
    const T* buffer = recv_dev_.data() + l.offset * nf;
    if (device_.backend == Backend::cuda) {
      parallel_for(device_, l.recv.size() * pending_.count, kernels::stencil::UnpackBox<T>{pending_, l.recv, buffer});
    } else {
      detail::host_rows(l.recv, pending_.count, kernels::stencil::UnpackRow<T>{pending_, l.recv, buffer});
    }
  }
}

template <class T>
void fill_side(const Grid& g, const Device& device, Field<T>& f, int axis, int side, T sign) {
  if (!g.physical(axis, side)) return;
  const Boundary kind = g.spec().boundary[static_cast<std::size_t>(axis)][static_cast<std::size_t>(side)];
  const auto n = g.count();
  Box box;
  for (int a = 0; a < 3; ++a) {
    const index_t h = g.halo(a);
    if (a == axis) {
      box.lo[a] = side == 0 ? -h : n[a];
      box.n[a] = h;
    } else {
      box.lo[a] = -h;
      box.n[a] = n[a] + 2 * h;
    }
  }
  if (box.size() <= 0) return;
  const kernels::stencil::FillSide<T> fill{f.view(), box, axis, n[static_cast<std::size_t>(axis)], side,
                                           kind == Boundary::wall, kind == Boundary::wall ? sign : T(1)};
  if (device.backend == Backend::cuda) {
    parallel_for(device, box.size(), fill);
  } else {
    detail::host_rows(box, 1, kernels::stencil::FillSideRow<T>{fill});
  }
}

template <class T>
void fill_boundaries(const Grid& g, const Device& device, Field<T>& f, std::array<T, 3> sign) {
  for (int a = 0; a < g.dims(); ++a)
    for (int s = 0; s < 2; ++s) fill_side(g, device, f, a, s, sign[static_cast<std::size_t>(a)]);
}

namespace detail {
// An exact reduction (max, Fixed128 sum: any order gives the same bits)
// of cell(i, j, k) over a box on the host, row by row: the linear
// parallel_reduce spends two integer divisions per cell finding (i, j, k),
// more than a diagnostic's own arithmetic. Rows in parallel, each in x
// order; the row results combined in order.
template <class T, class Cell, class Op>
T host_box_reduce(const Box& box, const Cell& cell, T init, Op op) {
  const index_t rows = box.n[1] * box.n[2];
  if (box.n[0] <= 0 || rows <= 0) return init;
  std::vector<T> partial(static_cast<std::size_t>(rows));
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < rows; ++r) {
    const index_t j = box.lo[1] + r % box.n[1], k = box.lo[2] + r / box.n[1];
    T acc = cell(box.lo[0], j, k);
    for (index_t i = box.lo[0] + 1; i < box.lo[0] + box.n[0]; ++i) acc = op(acc, cell(i, j, k));
    partial[static_cast<std::size_t>(r)] = acc;
  }
  T result = init;
  for (const T& v : partial) result = op(result, v);
  return result;
}
}  // namespace detail

template <class F>
double global_max(const Grid& g, const Device& device, const F& f) {
  using namespace kernels::stencil;
  const Box box = g.owned();
  const double local =
      device.backend == Backend::host
          ? detail::host_box_reduce(box, f, -std::numeric_limits<double>::infinity(), MaxOp{})
          : parallel_reduce(device, box.size(), BoxValue<F>{box, f}, -std::numeric_limits<double>::infinity(),
                            MaxOp{});
  // MPI_MAX drops NaN on some implementations: carry "any NaN" separately.
  const bool nan = g.mpi().any(std::isnan(local));
  return nan ? std::numeric_limits<double>::quiet_NaN() : g.mpi().max(local);
}

template <class F>
double global_sum(const Grid& g, const Device& device, const F& f) {
  using namespace kernels::stencil;
  const Box box = g.owned();
  const double m = global_max(g, device, AbsValue<F>{f});
  if (!std::isfinite(m)) return std::numeric_limits<double>::quiet_NaN();
  if (m == 0) return 0.0;
  int e = 0;
  std::frexp(m, &e);   // m < 2^e
  const int shift = std::min(62 - e, 1000);
  const double scale = std::ldexp(1.0, shift);
  const Quantised<F> quantised{box, f, scale};
  const Fixed128 local =
      device.backend == Backend::host
          ? detail::host_box_reduce(
                box, [&](index_t i, index_t j, index_t k) { return quantised.at(i, j, k); }, Fixed128{},
                Fixed128Plus{})
          : parallel_reduce(device, box.size(), quantised, Fixed128{}, Fixed128Plus{});
  return fixed128_sum_over_ranks(g.mpi().comm(), local, shift);
}

template <class T>
std::vector<double> owned_values(const Grid& g, const Field<T>& f) {
  std::vector<T> all(static_cast<std::size_t>(g.storage()));
  f.buffer().copy_to_host(all.data(), all.size());
  const auto e = g.extent();
  const auto n = g.count();
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(g.owned_cells()));
  for (index_t k = 0; k < n[2]; ++k)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t i = 0; i < n[0]; ++i)
        out.push_back(static_cast<double>(
            all[static_cast<std::size_t>(((k + g.halo(2)) * e[1] + j + g.halo(1)) * e[0] + i + g.halo(0))]));
  return out;
}

namespace detail {
// Global shape and this rank's box, slowest axis first ({nz,} ny, nx).
inline void global_box(const Grid& g, std::vector<std::int64_t>& global, std::vector<std::int64_t>& start,
                       std::vector<std::int64_t>& count) {
  global.clear();
  start.clear();
  count.clear();
  for (int a = g.dims() - 1; a >= 0; --a) {
    global.push_back(g.spec().n[static_cast<std::size_t>(a)]);
    start.push_back(g.start()[static_cast<std::size_t>(a)]);
    count.push_back(g.count()[static_cast<std::size_t>(a)]);
  }
}
}  // namespace detail

template <class T>
void save_field(StateWriter& w, const Grid& g, const Field<T>& f) {
  std::vector<std::int64_t> global, start, count;
  detail::global_box(g, global, start, count);
  const std::vector<double> values = owned_values(g, f);
  w.box("fields/" + f.name(), values, global, start, count);
}

template <class T>
void restore_field(StateReader& r, const Grid& g, Field<T>& f) {
  std::vector<std::int64_t> global, start, count;
  detail::global_box(g, global, start, count);
  std::vector<double> values(static_cast<std::size_t>(g.owned_cells()));
  r.box("fields/" + f.name(), values, start, count);
  std::vector<T> all(static_cast<std::size_t>(g.storage()));
  f.buffer().copy_to_host(all.data(), all.size());
  const auto e = g.extent();
  const auto n = g.count();
  std::size_t c = 0;
  for (index_t k = 0; k < n[2]; ++k)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t i = 0; i < n[0]; ++i)
        all[static_cast<std::size_t>(((k + g.halo(2)) * e[1] + j + g.halo(1)) * e[0] + i + g.halo(0))] =
            static_cast<T>(values[c++]);
  f.buffer().copy_from_host(all.data(), all.size());
}

}  // namespace strata::grid
