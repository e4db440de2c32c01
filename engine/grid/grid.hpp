// The distributed structured grid shared by the stencil models (diffusion,
// shallow_water, euler2d): a Cartesian decomposition of a 2-D or 3-D box of
// cells over the MPI ranks, fields with halos on a Device, non-blocking halo
// exchange, physical boundaries, exact global sums, and checkpoint I/O in
// global layout. Axis 0 is x (fastest in memory), 1 is y, 2 is z; a 2-D grid
// has n[2] = 1 and no halo on z. See docs/design/grids.md.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/buffer.hpp"
#include "engine/backend/parallel.hpp"
#include "engine/runtime/cartesian.hpp"
#include "engine/runtime/stop_request.hpp"
#include "engine/runtime/timers.hpp"
#include "kernels/grid/box_kernels.hpp"
#include "kernels/grid/field_view.hpp"
#include "kernels/grid/halo.hpp"

namespace strata {

class MpiContext;
class StateWriter;
class StateReader;
class Schema;
class Config;

namespace grid {

using kernels::grid::Box;
using kernels::grid::FieldView;
using kernels::grid::index_t;
using kernels::grid::IntVect;

enum class Boundary { periodic, wall, open };
const char* to_string(Boundary b);

// A grid model's `decomposition` key: ranks per axis (all 0: chosen by
// MPI_Dims_create), the key and where it was set (Config::where), for messages.
struct Decomposition {
  std::array<int, 3> ranks{0, 0, 0};
  std::string key, where;
};

struct GridSpec {
  int dims = 2;                                   // 2 or 3
  std::array<index_t, 3> n{1, 1, 1};              // global cells per axis
  std::array<double, 3> d{1, 1, 1};               // cell size per axis
  std::array<double, 3> origin{0, 0, 0};          // lower corner of cell (0, 0, 0)
  std::array<std::array<Boundary, 2>, 3> boundary{};  // [axis][low, high]; periodic on both sides or neither
  int halo = 1;                                   // halo width on every decomposed axis
  Decomposition decomposition;
  std::string axes = "xyz";                       // axis names, fastest first: messages, output (euler2d: "xz")
};

// One rank's part of the grid.
class Grid {
 public:
  // Collective. Throws InputError (naming the decomposition's key) when the
  // decomposition does not match the ranks or leaves a rank fewer cells on
  // an axis than the halo is wide.
  Grid(const MpiContext& mpi, const GridSpec& spec);
  Grid(const Grid&) = delete;
  Grid& operator=(const Grid&) = delete;

  const GridSpec& spec() const { return spec_; }
  const MpiContext& mpi() const { return mpi_; }
  MPI_Comm cart() const { return cart_.comm(); }
  int dims() const { return spec_.dims; }
  int halo() const { return spec_.halo; }
  // Halo width on `axis`: spec.halo on the grid's axes, 0 on z of a 2-D grid.
  int halo(int axis) const { return axis < spec_.dims ? spec_.halo : 0; }
  Boundary boundary(int axis, int side) const { return spec_.boundary.at(axis).at(side); }

  std::array<int, 3> ranks() const { return cart_.ranks(); }    // ranks per axis
  std::array<int, 3> coords() const { return cart_.coords(); }  // this rank's position
  IntVect start() const { return start_; }    // global index of owned cell (0, 0, 0)
  IntVect count() const { return count_; }    // owned cells per axis
  index_t owned_cells() const { return count_[0] * count_[1] * count_[2]; }
  // Local storage per axis (owned + 2 halo) and in all.
  IntVect extent() const;
  index_t storage() const;

  // Whether the low (side 0) or high (side 1) face of this rank's box on
  // `axis` is a non-periodic domain boundary, which the model fills.
  bool physical(int axis, int side) const;

  // Boxes of local indices: the owned cells, and those stored (halos included).
  Box owned() const;
  Box stored() const;
  // Owned cells at least `margin` from every face with a neighbour or a
  // physical boundary: they need no halo value within `margin`. Empty when
  // the box is too thin.
  Box interior(int margin) const;
  // The owned cells not in interior(margin), as disjoint boxes.
  std::vector<Box> strips(int margin) const;

  // Whether the halo beyond the low (side 0) or high (side 1) face of
  // `axis` comes from another rank, a message that HaloExchange::end()
  // waits for. False for a physical side and for a periodic axis this rank
  // spans alone, whose halo is its own cells (copied in begin()).
  bool remote(int axis, int side) const;
  // Whether any face's halo comes from another rank (remote on some side).
  bool exchanges() const;
  // The opt-in overlap that splits only where a message must be waited
  // for: the owned cells at least `margin` from every remote face (the
  // whole box on one rank), and the rest as disjoint boxes. Cells of
  // interior_remote(margin) may read, within `margin`, halo cells beyond a
  // periodic face of this rank's own (valid after HaloExchange::begin()) or
  // beyond a physical side (fill them after begin(), before the interior:
  // they come from owned cells); halo cells on edges and corners that
  // border a remote face are valid only after end() and the physical fill
  // that follows it, and only strips_remote cells read them. Cutting less
  // keeps rows long: a cut across x, the fastest axis, leaves one-cell
  // columns whose every cell costs a cache line.
  Box interior_remote(int margin) const;
  std::vector<Box> strips_remote(int margin) const;

  // Neighbour rank at offset (dx, dy, dz) in {-1, 0, 1}^3, or MPI_PROC_NULL.
  int neighbour(int dx, int dy, int dz) const { return cart_.neighbour(dx, dy, dz); }

 private:
  const MpiContext& mpi_;
  GridSpec spec_;
  Cartesian cart_;
  IntVect start_{{0, 0, 0}}, count_{{1, 1, 1}};

  // interior/strips with a margin on the faces marked in `cut` ([axis][side]).
  using Faces = std::array<std::array<bool, 2>, 3>;
  Box shrink(int margin, const Faces& cut) const;
  std::vector<Box> split(int margin, const Faces& cut) const;
  Faces all_faces() const;
  Faces remote_faces() const;
};

// A field of one rank with its halo, on a Device: one or more components
// (euler2d's four state variables), each with its own name (the
// checkpoint key and what messages report).
template <class T>
class Field {
 public:
  Field() = default;
  Field(const Grid& g, const Device& device, std::string name) : Field(g, device, std::vector{std::move(name)}) {}
  Field(const Grid& g, const Device& device, std::vector<std::string> names)
      : names_(std::move(names)),
        stored_(g.stored()),
        buffer_(device, static_cast<std::size_t>(g.storage()) * names_.size()) {}
  int ncomp() const { return static_cast<int>(names_.size()); }
  const std::string& name(int c = 0) const { return names_[static_cast<std::size_t>(c)]; }
  FieldView<T> view() { return kernels::grid::field_view(buffer_.data(), stored_, ncomp()); }
  FieldView<const T> view() const { return kernels::grid::field_view(buffer_.data(), stored_, ncomp()); }
  Buffer<T>& buffer() { return buffer_; }
  const Buffer<T>& buffer() const { return buffer_; }
  // Swaps the storage only: a name is the field's role, so after
  // `u.swap(u_next)` u is still "u".
  void swap(Field& o) { std::swap(buffer_, o.buffer_); }

 private:
  std::vector<std::string> names_;
  Box stored_;
  Buffer<T> buffer_;
};

// A view of a host copy of a field's storage (`ncomp` components of the
// grid's stored box), for initial states, output and tests.
template <class T>
FieldView<T> host_view(const Grid& g, std::vector<T>& v, int ncomp = 1) {
  return kernels::grid::field_view(v.data(), g.stored(), ncomp);
}

// Runs f(i, j, k) over a box, or f(i, j, k, c) for each of ncomp
// components, on the device (kernels/grid/box_kernels.hpp: one thread per
// cell on CUDA, F declared by STRATA_GRID_FOR in the model's kernel list;
// vectorised rows on the host).
template <class F>
void for_box(const Device& device, const Box& box, const F& f, int ncomp = 1) {
  if (box.size() <= 0) return;
  parallel_for(device, box.size() * ncomp, kernels::grid::BoxKernel<F>{box, f, ncomp});
}

// Runs f.at(b, c, box)(i, j, k) over every cell of every box b of a list
// and each of ncomp components, in one launch (kernels/grid/box_kernels.hpp:
// BoxListKernel, F declared by STRATA_GRID_LIST_FOR).
template <class F>
void for_boxes(const Device& device, const kernels::grid::BoxList& boxes, const F& f, int ncomp = 1) {
  if (boxes.cells() <= 0) return;
  parallel_for(device, boxes.cells(), kernels::grid::BoxListKernel<F>{boxes, f, ncomp});
}

// Halo exchange of up to kMaxFields fields of type T with all 3^dims - 1
// neighbours at once (faces, edges and corners), non-blocking: begin() packs
// and posts, end() waits and unpacks; compute the interior in between.
// A neighbour that is this rank itself (a periodic axis one rank spans)
// gets no message: begin() copies those halos from the owned cells, so
// they are valid from begin() on (Grid::interior_remote relies on it).
// Physical boundaries are left to the model (fill_side below).
template <class T>
class HaloExchange {
 public:
  // With timers, the time spent posting the messages and waiting for them
  // (not packing or unpacking) goes to the phase "halo_exchange", and so
  // out of the step's "compute": what the step spends on the network that
  // the interior's work did not hide.
  HaloExchange(const Grid& g, const Device& device, int max_fields, Timers* timers = nullptr);
  ~HaloExchange();
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  // Up to max_fields components in all (a field of ncomp counts ncomp).
  // wrap = false leaves the halos of the wrapped axes as they are: for a
  // step that reads across those seams itself (kernels/stencil/diffusion.hpp,
  // PeriodicHeatStep) or does not read them (euler2d's z sweep).
  void begin(std::initializer_list<Field<T>*> fields, bool wrap = true);
  void end();
  // A periodic axis this rank spans alone: its halos are copies begin()
  // makes, and no message crosses it.
  bool wrapped(int axis) const { return wrapped_[axis]; }
  void exchange(std::initializer_list<Field<T>*> fields) {
    begin(fields);
    end();
  }

 private:
  struct Link {
    int rank;
    int send_tag, recv_tag;
    Box send, recv;
    std::size_t offset;   // into the buffers, in elements per field
  };
  const Grid& grid_;
  Device device_;
  int max_fields_;
  Timers* timers_;
  bool staged_ = false;   // device buffers reach MPI through host copies (not CUDA-aware)
  std::vector<Link> links_;
  // The links' boxes, one launch packs (unpacks) them all; the wrapped
  // axes' low halo slabs, one launch wraps them all (PeriodicWrap).
  kernels::grid::BoxList sends_, receives_, wraps_;
  int wrap_axis_[3] = {0, 0, 0};
  bool wrapped_[3] = {false, false, false};
  std::size_t cells_ = 0;   // halo cells of all links (per field)
  Buffer<T> send_dev_, recv_dev_;                 // pack target (device or host memory)
  std::vector<T> send_host_, recv_host_;          // staging for CUDA without CUDA-aware MPI
  std::vector<MPI_Request> requests_;
  kernels::grid::FieldSet<T> pending_;
};

// Fills the halo of a physical boundary (Grid::physical) of `axis`/`side`
// over the whole extent of the other axes, halos included (call after the
// exchange, axis by axis in order, so edges and corners come out right):
// Boundary::wall mirrors with `sign`, Boundary::open copies the nearest
// owned cell. Does nothing where the side is not physical.
template <class T>
void fill_side(const Grid& g, const Device& device, Field<T>& f, int axis, int side, T sign = T(1));
// All physical sides of `f` by the boundary kinds of the spec, with `sign`
// per axis (e.g. {-1, 1, 1} for u, which changes sign at walls normal to x).
template <class T>
void fill_boundaries(const Grid& g, const Device& device, Field<T>& f, std::array<T, 3> sign = {1, 1, 1});

// Exact global sum over the owned cells of a per-cell double value f(i, j,
// k): every value is quantised to a common power-of-two scale (2^-62 of the
// largest |value|) and summed as 128-bit integers, so the result is bitwise
// the same for any decomposition, thread count and backend, and within
// n * 2^-62 * max|f| of the exact sum (engine/runtime/fixed_sum.hpp's
// exact_sum_over_ranks). NaN when any value is not finite. Collective. F is
// declared by STRATA_GRID_SUM in the model's kernel list.
template <class F>
double global_sum(const Grid& g, const Device& device, const F& f);
// Global maximum of f over the owned cells (exact in any order); NaN wins.
template <class F>
double global_max(const Grid& g, const Device& device, const F& f);

// Checkpoint I/O of a field in global layout (owned cells only): any other
// decomposition reads it back.
template <class T>
void save_field(StateWriter& w, const Grid& g, const Device& device, const Field<T>& f);
template <class T>
void restore_field(StateReader& r, const Grid& g, const Device& device, Field<T>& f);
// Every component of `f`'s owned cells, x fastest, component after
// component (owned_cells() * ncomp values), gathered into `to` on the device
// (to is its memory), and back: what crosses to the host for output and
// checkpoints, never the halos (which may hold memory nothing wrote).
template <class T>
void pack_owned(const Grid& g, const Device& device, const Field<T>& f, T* to);
template <class T>
void unpack_owned(const Grid& g, const Device& device, const T* from, Field<T>& f);
// This rank's owned cells of component c of `f` on the host, x fastest, no
// halos (for self-checks and checkpoints).
template <class T>
std::vector<double> owned_values(const Grid& g, const Device& device, const Field<T>& f, int c = 0);
// Sets this rank's owned cells of a 2-D `f` to value(I, J) at global indices
// (on the host, at the start; halos 0). O(cells): a signal ends the loop
// early (once a row); the model's next collective step then stops the run.
template <class T, class F>
void set_owned(const Grid& g, Field<T>& f, const F& value) {
  std::vector<T> all(f.buffer().size(), T(0));
  const FieldView<T> at = host_view(g, all);
  const auto st = g.start(), n = g.count();
  for (index_t j = 0; j < n[1] && stop_signal() == 0; ++j)
    for (index_t i = 0; i < n[0]; ++i) at(i, j) = static_cast<T>(value(st[0] + i, st[1] + j));
  f.buffer().copy_from_host(all.data(), all.size());
}

// Whether Open MPI was built CUDA-aware and says so at run time.
bool mpi_cuda_aware();

// The `decomposition` key of a grid model: [] (MPI_Dims_create chooses) or
// one rank count per axis. declare_decomposition adds it to a schema;
// read_decomposition reads it, an InputError naming the key when it has
// the wrong number of entries.
void declare_decomposition(Schema& s, const std::string& key, int dims, const std::string& axes = "xyz");
Decomposition read_decomposition(const Config& c, const std::string& key, int dims);
// Bytes of `fields` fields of T with halos on the largest rank's box (for
// memory plans, before anything is allocated). Collective.
std::size_t field_bytes(const MpiContext& mpi, const GridSpec& spec, int fields, std::size_t element_size);

}  // namespace grid
}  // namespace strata

#include "engine/grid/grid_instantiate.hpp"
#include "engine/grid/grid_impl.hpp"
