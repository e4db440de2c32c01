#include "engine/grid/grid.hpp"

#include <algorithm>
#include <string>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/tree_sum.hpp"

namespace strata::grid {

namespace {

std::string list_text(const std::array<int, 3>& r, int dims) {
  std::string s = "[";
  for (std::size_t a = 0; a < static_cast<std::size_t>(dims); ++a) s += (a ? ", " : "") + std::to_string(r[a]);
  return s + "]";
}
}  // namespace

const char* to_string(Boundary b) {
  switch (b) {
    case Boundary::periodic: return "periodic";
    case Boundary::wall: return "wall";
    case Boundary::open: return "open";
  }
  return "?";
}

Grid::Grid(const MpiContext& mpi, const GridSpec& spec) : mpi_(mpi), spec_(spec) {
  if (spec.dims != 2 && spec.dims != 3) throw std::logic_error("Grid: dims must be 2 or 3");
  if (spec.dims == 2) {
    spec_.n[2] = 1;
    spec_.boundary[2] = {Boundary::periodic, Boundary::periodic};
  }
  for (const auto& b : spec_.boundary) {
    if ((b[0] == Boundary::periodic) != (b[1] == Boundary::periodic))
      throw std::logic_error("Grid: periodic on one side of an axis only");
  }
  const Decomposition& dec = spec.decomposition;
  const std::string at = dec.where.empty() ? "" : dec.where + ": ";
  const auto axes = static_cast<std::size_t>(spec.dims);
  const int size = mpi.size();
  const bool given = std::any_of(dec.ranks.begin(), dec.ranks.begin() + spec.dims, [](int r) { return r > 0; });
  std::array<int, 3> ranks{1, 1, 1};
  if (given) {
    int product = 1;
    for (std::size_t a = 0; a < axes; ++a) {
      const int r = dec.ranks[a];
      if (r < 1)
        throw InputError(at + dec.key + " = " + list_text(dec.ranks, spec.dims) +
                         ": every entry must be at least 1");
      product *= r;
      ranks[a] = r;
    }
    if (product != size)
      throw InputError(at + dec.key + " = " + list_text(dec.ranks, spec.dims) + ": asks for " +
                       std::to_string(product) + " ranks, but the run has " + std::to_string(size));
  } else {
    // MPI_Dims_create gives non-increasing factors; the most ranks go to the
    // axis with the most cells, so subdomains stay close to square, and
    // among axes with as many cells to the slowest (z, then y, then x): a
    // cut across x, the fastest axis, makes strided messages of one-cell
    // rows and shorter rows to sweep, while a cut across z or y exchanges
    // contiguous planes or rows (and a periodic x then needs no message).
    std::array<int, 3> order{0, 1, 2};
    std::stable_sort(order.begin(), order.begin() + spec.dims, [&](std::size_t a, std::size_t b) {
      return spec_.n[a] != spec_.n[b] ? spec_.n[a] > spec_.n[b] : a > b;
    });
    ranks = Cartesian::choose(size, spec.dims, order);
  }
  std::array<bool, 3> periodic{false, false, false};
  for (std::size_t a = 0; a < axes; ++a) periodic[a] = spec_.boundary[a][0] == Boundary::periodic;
  cart_ = Cartesian(mpi.comm(), spec.dims, ranks, periodic);
  // Every rank must own at least a halo's width on each axis: the halo of a
  // neighbour is filled from one rank only. Decide collectively.
  std::string problem;
  for (int a = 0; a < spec.dims; ++a) {   // the other axes keep start 0, count 1
    const BlockRange r = cart_.own(a, spec_.n.at(a));
    start_[a] = r.first;
    count_[a] = r.size();
    if (count_[a] < spec.halo && problem.empty()) {
      const std::string axis = spec.axes.substr(static_cast<std::size_t>(a), 1);
      problem = "the decomposition " + list_text(ranks, spec.dims) + " gives rank " + std::to_string(mpi.rank()) +
                " only " + std::to_string(count_[a]) + " cells along " + axis + " (of " +
                std::to_string(spec_.n.at(a)) + "), fewer than the halo width " + std::to_string(spec.halo) +
                "; use fewer ranks along " + axis + (given ? "" : " (set " + dec.key + ")") +
                " or more cells";
      problem = at + (given ? dec.key + " = " + list_text(dec.ranks, spec.dims) + ": " : "") + problem;
    }
  }
  const auto problems = mpi.gather_strings(problem);
  for (const auto& p : problems) {
    if (!p.empty()) throw InputError(p);
  }
}

IntVect Grid::extent() const { return {{count_[0] + 2 * halo(0), count_[1] + 2 * halo(1), count_[2] + 2 * halo(2)}}; }

index_t Grid::storage() const { return stored().size(); }

bool Grid::physical(int axis, int side) const {
  if (axis >= spec_.dims) return false;
  if (boundary(axis, side) == Boundary::periodic) return false;
  const auto a = static_cast<std::size_t>(axis);
  return side == 0 ? cart_.coords()[a] == 0 : cart_.coords()[a] == cart_.ranks()[a] - 1;
}

Box Grid::owned() const { return {{}, count_}; }

Box Grid::stored() const { return {{{-halo(0), -halo(1), -halo(2)}}, extent()}; }

Grid::Faces Grid::all_faces() const {
  Faces f{};
  for (std::size_t a = 0; a < static_cast<std::size_t>(spec_.dims); ++a) f[a] = {true, true};
  return f;
}

Grid::Faces Grid::remote_faces() const {
  Faces f{};
  for (std::size_t a = 0; a < static_cast<std::size_t>(spec_.dims); ++a)
    for (std::size_t s = 0; s < 2; ++s) f[a][s] = remote(static_cast<int>(a), static_cast<int>(s));
  return f;
}

bool Grid::remote(int axis, int side) const {
  if (axis >= spec_.dims) return false;
  int o[3] = {0, 0, 0};
  o[axis] = side == 0 ? -1 : 1;
  const int rank = neighbour(o[0], o[1], o[2]);
  // The Cartesian communicator keeps MpiContext's numbering (reorder = 0).
  return rank != MPI_PROC_NULL && rank != mpi_.rank();
}

bool Grid::exchanges() const {
  for (int a = 0; a < spec_.dims; ++a)
    if (remote(a, 0) || remote(a, 1)) return true;
  return false;
}

Box Grid::shrink(int margin, const Faces& cut) const {
  Box b = owned();
  for (int a = 0; a < spec_.dims; ++a) {
    const auto& c = cut[static_cast<std::size_t>(a)];
    const index_t low = c[0] ? margin : 0, high = c[1] ? margin : 0;
    b.lo[a] = low;
    b.n[a] = std::max<index_t>(0, count_[a] - low - high);
  }
  if (b.size() == 0)
    for (int a = 0; a < 3; ++a) b.n[a] = 0;
  return b;
}

std::vector<Box> Grid::split(int margin, const Faces& cut) const {
  std::vector<Box> out;
  Box rest = owned();
  // Slowest axis first: its strips are whole planes of long rows.
  for (int a = spec_.dims - 1; a >= 0; --a) {
    const auto& c = cut[static_cast<std::size_t>(a)];
    const index_t low = c[0] ? std::min<index_t>(margin, rest.n[a]) : 0;
    const index_t high = c[1] ? std::min<index_t>(margin, rest.n[a] - low) : 0;
    if (low > 0) {
      Box b = rest;
      b.n[a] = low;
      out.push_back(b);
    }
    if (high > 0) {
      Box b = rest;
      b.lo[a] = rest.lo[a] + rest.n[a] - high;
      b.n[a] = high;
      out.push_back(b);
    }
    rest.lo[a] += low;
    rest.n[a] -= low + high;
    if (rest.n[a] == 0) break;
  }
  return out;
}

Box Grid::interior(int margin) const { return shrink(margin, all_faces()); }
std::vector<Box> Grid::strips(int margin) const { return split(margin, all_faces()); }
Box Grid::interior_remote(int margin) const { return shrink(margin, remote_faces()); }
std::vector<Box> Grid::strips_remote(int margin) const { return split(margin, remote_faces()); }

bool mpi_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

void declare_decomposition(Schema& s, const std::string& key, int dims, const std::string& axes) {
  std::string shape = "[";
  for (std::size_t a = 0; a < static_cast<std::size_t>(dims); ++a) shape += std::string(a ? ", p" : "p") + axes[a];
  shape += "]";
  std::string slowest_first;
  for (std::size_t a = static_cast<std::size_t>(dims); a-- > 0;)
    slowest_first += (slowest_first.empty() ? "" : ", then ") + axes.substr(a, 1);
  s.integer_list(key, {}, Range{1.0, {}},
                 "ranks per axis " + shape + " (their product is the number of ranks; uneven splits allowed); [] lets "
                 "MPI_Dims_create choose, giving the most ranks to the axis with the most cells and, between axes "
                 "with as many, to the slowest (" + slowest_first +
                     ": a cut across the fastest axis makes strided messages and short rows). Results are bitwise "
                     "the same for every decomposition")
      .restart_safe = true;
}

Decomposition read_decomposition(const Config& c, const std::string& key, int dims) {
  const std::vector<std::int64_t> v = c.integers(key);
  Decomposition d{{0, 0, 0}, key, c.where(key)};
  if (!v.empty() && static_cast<int>(v.size()) != dims)
    c.fail(key, "expected " + std::to_string(dims) + " entries (one per axis), got " + std::to_string(v.size()));
  for (std::size_t a = 0; a < v.size(); ++a) {
    if (v[a] > 1'000'000) c.fail(key, "more ranks than any machine has");
    d.ranks[a] = static_cast<int>(v[a]);
  }
  return d;
}

std::size_t field_bytes(const MpiContext& mpi, const GridSpec& spec, int fields, std::size_t element_size) {
  const Grid g(mpi, spec);
  const double mine = static_cast<double>(g.storage());
  return static_cast<std::size_t>(mpi.max(mine)) * static_cast<std::size_t>(fields) * element_size;
}

}  // namespace strata::grid
