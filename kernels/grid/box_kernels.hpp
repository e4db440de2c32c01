// Launching a per-cell functor over a Box: the launcher, not the functor,
// owns the loop (AMReX's ParallelFor(Box, ncomp, f)). A functor is called
// f(i, j, k) for every cell, or, a per-component one, f.component(c)(i, j,
// k) for every cell and c in [0, ncomp), once each, in any order: on CUDA
// one thread per cell from the block and grid indices (the box launch of
// engine/backend/cuda_parallel.cuh, through `cell`), every component in
// turn; on the host (host_for, chosen by engine/backend's parallel_for)
// OpenMP over the rows of x and a vectorised loop along each row. Neither
// divides an index per cell. operator()(idx), one decode of a linear
// index per cell, is the plain reference both are tested against. All
// compute the same values, so results are bitwise the same.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/grid/field_view.hpp"

namespace strata::kernels::grid {

template <class F>
inline constexpr bool kPerComponent = requires(const F& f) { f.component(0); };

// The integer instructions a CUDA thread of the box launch spends on
// finding its cell: x from its block and thread (a multiply-add), y
// likewise, z from the block, the three converted to 64 bits and offset by
// the box's corner, the bound check and the loops' tests (counted in
// nvcc 13's PTX of box_kernel<BoxKernel<HeatStep<double>>>, sm_90).
inline constexpr double kBoxLaunchIntOps = 12;

// A CUDA thread of the box launch takes up to kBoxRowsPerThread
// consecutive rows of y, as long as the launch keeps at least
// kBoxLaunchThreads threads (four times the 132 x 2,048 an H200 holds
// resident, so a small box still gets a thread a cell). Its index work is
// then paid once for the rows: of the 12 instructions above, the 2 of a
// row's loop are paid per cell, the other 10 per thread. The functor's own
// set-up (its parameters, the parts of its addresses that do not change
// along y), which no cell declares, is paid per thread too: in nvcc 13's
// PTX of the 7-point heat step (fp64, 8 rows a thread) the instructions
// that are neither floating-point nor a load or store go from about 70 a
// cell to about 31, in the same 40 registers. The row loop is not
// unrolled: unrolled by 4 it takes 72 registers (half the occupancy) for
// 24 of them.
inline constexpr int kBoxRowsPerThread = 8;
inline constexpr std::int64_t kBoxLaunchThreads = std::int64_t{1} << 20;
inline constexpr double kBoxThreadIntOps = 10, kBoxRowIntOps = 2;

// The rows of y a thread of the box launch over `box` takes: at most
// `most`, halved while the launch would have fewer than `least` threads.
STRATA_HD inline int box_rows_per_thread(const Box& box, int most = kBoxRowsPerThread,
                                         std::int64_t least = kBoxLaunchThreads) {
  int rows = most;
  while (rows > 1 && box.size() / rows < least) rows /= 2;
  return rows;
}

// The launch over a box (engine/backend/cuda_parallel.cuh): blocks of
// block[0] x block[1] threads, grid[0] x grid[1] x grid[2] blocks, each
// thread `rows` rows. Blocks of 256 threads (or `block_threads`, a power
// of two from 32): along x the widest of 256, 128, 64, 32 that wastes the
// fewest threads at the end of a row (384 cells: 3 x 128), the rest along
// y; a row shorter than 32 takes the next power of two and y the rest (a
// face normal to x: 1 or 2 cells a row).
// Grids beyond 65,535 blocks in y or z loop over the rest in the thread.
struct BoxLaunchShape {
  int block[2] = {1, 1};
  std::int64_t grid[3] = {0, 0, 0};
  int rows = 1;

  explicit BoxLaunchShape(const Box& box) : BoxLaunchShape(box, box_rows_per_thread(box)) {}
  BoxLaunchShape(const Box& box, int rows_per_thread, int block_threads = 256) : rows(rows_per_thread) {
    const int kThreads = block_threads;
    const index_t n0 = box.n[0];
    if (n0 >= 32) {
      index_t best = -1;
      for (int w = kThreads; w >= 32; w /= 2) {
        const index_t waste = (n0 + w - 1) / w * w - n0;
        if (best < 0 || waste < best) {
          best = waste;
          block[0] = w;
        }
      }
    } else {
      while (block[0] < n0) block[0] *= 2;
    }
    block[1] = kThreads / block[0];
    const index_t per_block_y = static_cast<index_t>(block[1]) * rows;
    grid[0] = (n0 + block[0] - 1) / block[0];
    grid[1] = std::min<index_t>((box.n[1] + per_block_y - 1) / per_block_y, 65535);
    grid[2] = std::min<index_t>(box.n[2], 65535);
  }
  std::int64_t threads() const { return grid[0] * grid[1] * grid[2] * block[0] * block[1]; }
  // The launch's index work a cell, with `rows` rows a thread.
  double int_ops_per_cell() const { return kBoxThreadIntOps / rows + kBoxRowIntOps; }
};

// The cells (x, y, z) of a box that one thread of a BoxLaunchShape launch
// visits, in order: x_index (its x in the launch), `rows` consecutive rows
// of y from y_thread * rows (y_threads threads along y), for z from its
// block's z_block in steps of z_blocks (the loops past the grid's 65,535
// blocks). Every cell of the box exactly once over the launch
// (tests/unit/test_stencil_kernels.cpp walks every thread).
template <class Visit>
STRATA_HD STRATA_FORCEINLINE void box_thread_cells(const Box& box, int rows, std::int64_t x_index,
                                                  std::int64_t y_thread, std::int64_t y_threads, std::int64_t z_block,
                                                  std::int64_t z_blocks, Visit&& visit) {
  const int n0 = static_cast<int>(box.n[0]), n1 = static_cast<int>(box.n[1]), n2 = static_cast<int>(box.n[2]);
  if (x_index >= n0) return;
  const index_t x = box.lo[0] + x_index;
  const std::int64_t first = y_thread * rows, stride = y_threads * rows;
  for (int k = static_cast<int>(z_block); k < n2; k += static_cast<int>(z_blocks)) {
    const index_t z = box.lo[2] + k;
    for (std::int64_t j0 = first; j0 < n1; j0 += stride) {
      const int j1 = static_cast<int>(j0 + rows < n1 ? j0 + rows : n1);
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
      for (int j = static_cast<int>(j0); j < j1; ++j) visit(x, box.lo[1] + j, z);
    }
  }
}

// The device work of one cell (or cell and component) of a cell functor:
// its own `static constexpr Work cell_work()`, plus what a CUDA thread of
// the box launch spends finding its cell (`launch_int_ops`: kBoxLaunchIntOps
// for a thread a cell).
template <class F>
constexpr Work cell_work_of(double launch_int_ops = kBoxLaunchIntOps) {
  if constexpr (requires { F::cell_work(); }) {
    return F::cell_work() + Work{0, 0, launch_int_ops};
  } else {
    return Work{0, 0, launch_int_ops};
  }
}

// The work of one cell of a functor when a thread finds its cell from a
// linear index with `divisions` 64-bit divisions (the reference launch, a
// reduction's cell): the decode instead of the box launch's index.
template <class F>
constexpr Work cell_work_decoded(double divisions) {
  return cell_work_of<F>() + Work{0, 0, divisions * kDivide64IntOps + 10 - kBoxLaunchIntOps};
}

// Row r of the host's walk over `planes` planes of n1 rows each by pairs
// of planes, (j, k), (j, k + 1), (j + 1, k), ..., an odd last plane alone
// after the pairs (BoxKernel::host_for says why).
struct PlaneRow {
  index_t plane, row;
};
inline PlaneRow plane_pair_row(index_t r, index_t n1, index_t planes) {
  const index_t paired = planes / 2 * 2 * n1;
  if (r >= paired) return {planes - 1, r - paired};
  const index_t q = r % (2 * n1);
  return {r / (2 * n1) * 2 + q % 2, q / 2};
}

template <class F>
struct BoxKernel {
  Box box;
  F f;
  int ncomp = 1;   // components: only for a functor with component(c)

  static constexpr bool kComponents = kPerComponent<F>;

  // As launched (the box launch on CUDA): a thread for `rows` cells of a
  // column, every component in them.
  Work work(std::int64_t n) const {
    return cell_work_of<F>(BoxLaunchShape(box).int_ops_per_cell()) * static_cast<double>(n);
  }
  // The CUDA threads of that launch (the shape counts' threads).
  std::int64_t launch_threads(std::int64_t) const { return BoxLaunchShape(box).threads(); }

  // Cell (i, j, k) of component c (0 for a functor without components).
  STRATA_HD STRATA_FORCEINLINE void cell(index_t i, index_t j, index_t k, int c) const {
    if constexpr (kPerComponent<F>) {
      f.component(c)(i, j, k);
    } else {
      static_cast<void>(c);
      f(i, j, k);
    }
  }

  // The reference launch: cell and component from the linear index idx.
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t idx) const {
    const index_t cells = box.size();
    const index_t c = kPerComponent<F> ? idx / cells : 0;
    const IntVect p = decode(box, idx - c * cells);
    cell(p[0], p[1], p[2], static_cast<int>(c));
  }

  // Rows shorter than this (a face normal to x: one or two cells) go by
  // planes, where a division per row would cost more than the row.
  static constexpr index_t kLongRow = 16;

  // The host's launch over the whole box (the argument, box.size() times
  // ncomp, is implied). Long rows go by pairs of planes, (j, k), (j, k + 1),
  // (j + 1, k), ...: a stencil reaching k - 1 and k + 1 then finds rows k
  // and k + 1 of its input still in L1 for the second row of each pair, so
  // its input streams through the caches twice per two planes instead of
  // three times per plane (the 7-point heat step: +25% at 256^3 on a
  // 2-core EPYC). An odd last plane goes alone, after the pairs. Planes
  // count components too: plane p is component p / n[2], z index p % n[2].
  void host_for(std::int64_t) const {
    const index_t n1 = box.n[1], planes = ncomp * box.n[2];
    if (box.n[0] <= 0 || n1 <= 0 || planes <= 0) return;
    if (box.n[0] >= kLongRow) {
      const index_t rows = planes * n1;
#pragma omp parallel for schedule(static)
      for (index_t r = 0; r < rows; ++r) {
        const PlaneRow pr = plane_pair_row(r, n1, planes);
        row(pr.plane, pr.row);
      }
    } else {
#pragma omp parallel for schedule(static)
      for (index_t p = 0; p < planes; ++p) {
        const index_t c = p / box.n[2], k = box.lo[2] + p - c * box.n[2];
        const auto g = cells_of(c);
        for (index_t j = box.lo[1]; j < box.lo[1] + n1; ++j)
          for (index_t i = box.lo[0]; i < box.lo[0] + box.n[0]; ++i) g(i, j, k);
      }
    }
  }

 private:
  // Row j (from box.lo[1]) of plane p, its cells a vectorised loop.
  STRATA_FORCEINLINE void row(index_t p, index_t j) const {
    const index_t c = p / box.n[2], k = box.lo[2] + p - c * box.n[2], y = box.lo[1] + j;
    const index_t first = box.lo[0], last = box.lo[0] + box.n[0];
    const auto g = cells_of(c);
#pragma omp simd
    for (index_t i = first; i < last; ++i) g(i, y, k);
  }
  // A local copy of the cell functor (of component c): no aliasing of its
  // pointers with the stores, and no field chosen per cell.
  STRATA_FORCEINLINE auto cells_of(index_t c) const {
    if constexpr (kPerComponent<F>) {
      return f.component(static_cast<int>(c));
    } else {
      return F(f);
    }
  }
};

// Up to kMaxBoxes boxes launched as one (the halo kernels: every
// neighbour's message packed at once, every wrapped axis at once): a
// functor's `at(b, c, box)` is the cell functor of box b and component c.
inline constexpr int kMaxBoxes = 26;   // the neighbours of a 3-D box

struct BoxList {
  Box box[kMaxBoxes];
  index_t first[kMaxBoxes + 1] = {};   // cells of the boxes before box b (one component)
  int count = 0;

  // Boxes with no cells are left out. At most kMaxBoxes.
  void add(const Box& b) {
    if (b.size() <= 0) return;
    box[count] = b;
    first[count + 1] = first[count] + b.size();
    ++count;
  }
  STRATA_HD index_t cells() const { return first[count]; }
};

// A thread of a box list finds its box (a binary search of the prefix
// sums, 5 steps for 26 boxes) and its cell in it (a 32-bit division and
// remainder by n[0] and by n[1]: a halo box fits in 32 bits), then does
// every component of that cell.
inline constexpr double kDivide32IntOps = 20;   // nvcc's 32-bit division: the 64-bit one's fast path without its test
inline constexpr double kBoxListIntOps = 5 * 3 + 2 * kDivide32IntOps + 10;

template <class F>
struct BoxListKernel {
  BoxList boxes;
  F f;
  int ncomp = 1;

  // Threads index the argument's arrays (the boxes): on CUDA it is read in
  // place, from the kernel's parameter space, not copied to every thread.
  static constexpr bool kIndexedArgument = true;

  // Launched over boxes.cells() threads, one a cell (components in it).
  Work work(std::int64_t n) const {
    Work cell{0, 0, kBoxListIntOps};
    if constexpr (requires { F::cell_work(); }) cell = cell + F::cell_work() * static_cast<double>(ncomp);
    return cell * static_cast<double>(n);
  }

  // Cell idx of the list (the CUDA launch's thread, and the reference).
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t idx) const {
    int lo = 0, hi = boxes.count - 1;   // the box b with first[b] <= idx < first[b + 1]
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (boxes.first[mid] <= idx) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const Box& b = boxes.box[lo];
    const auto local = static_cast<std::uint32_t>(idx - boxes.first[lo]);
    const auto n0 = static_cast<std::uint32_t>(b.n[0]), n1 = static_cast<std::uint32_t>(b.n[1]);
    const std::uint32_t row = local / n0;
    const index_t i = b.lo[0] + static_cast<index_t>(local - row * n0);
    const index_t j = b.lo[1] + static_cast<index_t>(row % n1), k = b.lo[2] + static_cast<index_t>(row / n1);
    for (int c = 0; c < ncomp; ++c) f.at(lo, c, b)(i, j, k);
  }

  // The host's launch over every box and component: OpenMP over all their
  // rows at once, each row a loop along x.
  void host_for(std::int64_t) const {
    index_t rows_before[kMaxBoxes + 1] = {};
    for (int b = 0; b < boxes.count; ++b)
      rows_before[b + 1] = rows_before[b] + ncomp * boxes.box[b].n[1] * boxes.box[b].n[2];
    const index_t rows = rows_before[boxes.count];
#pragma omp parallel for schedule(static) if (rows > 1)
    for (index_t r = 0; r < rows; ++r) {
      int b = 0;
      while (r >= rows_before[b + 1]) ++b;
      const Box& x = boxes.box[b];
      const index_t q = r - rows_before[b], plane = q / x.n[1], j = x.lo[1] + q % x.n[1];
      const int c = static_cast<int>(plane / x.n[2]);
      const index_t k = x.lo[2] + plane % x.n[2];
      const auto g = f.at(b, c, x);
      for (index_t i = x.lo[0]; i < x.lo[0] + x.n[0]; ++i) g(i, j, k);
    }
  }
};

// A box-list functor over one box alone, as a per-component cell functor
// for BoxKernel (for_box): box 0 of the list is `box`. For boxes that may
// not fit BoxListKernel's 32-bit cell index (a rank's owned cells:
// grid::pack_owned).
template <class F>
struct SingleBox {
  F f;
  Box box;
  static constexpr Work cell_work() {
    if constexpr (requires { F::cell_work(); }) {
      return F::cell_work();
    } else {
      return Work{};
    }
  }
  STRATA_HD STRATA_FORCEINLINE auto component(int c) const { return f.at(0, c, box); }
};

// f(i, j, k) of the cell at linear position idx of a box (what
// parallel_reduce reduces).
template <class F>
struct BoxValue {
  Box box;
  F f;
  // A reduction's thread decodes its cell: two 64-bit divisions.
  Work work(std::int64_t n) const { return cell_work_decoded<F>(2) * static_cast<double>(n); }
  STRATA_HD STRATA_FORCEINLINE double operator()(index_t idx) const {
    const IntVect p = decode(box, idx);
    return f(p[0], p[1], p[2]);
  }
  // The host's reduction of map(f(i, j, k)) over the box (parallel_reduce
  // and exact_sum_over_ranks choose it): rows in parallel, each in x
  // order, no index division per cell. Exact operators only (max, Fixed128
  // sums, counts), so the order of the rows does not change the bits.
  template <class T, class Op, class Map = std::identity>
  T host_reduce(std::int64_t, T init, Op op, Map map = {}) const {
    const index_t rows = box.n[1] * box.n[2];
    T result = init;
    if (box.n[0] <= 0 || rows <= 0) return result;
#pragma omp parallel
    {
      T acc = init;
#pragma omp for schedule(static) nowait
      for (index_t r = 0; r < rows; ++r) {
        const index_t j = box.lo[1] + r % box.n[1], k = box.lo[2] + r / box.n[1];
        for (index_t i = box.lo[0]; i < box.lo[0] + box.n[0]; ++i) acc = op(acc, map(f(i, j, k)));
      }
#pragma omp critical(strata_box_reduce)
      result = op(result, acc);
    }
    return result;
  }
};

// 1 for a cell whose value is NaN or infinite, else 0 (a local health check).
template <class T>
struct NonFiniteCell {
  FieldView<const T> f;
  STRATA_HD double operator()(index_t i, index_t j, index_t k) const {
    const T v = f(i, j, k);
    return (v - v == v - v) ? 0.0 : 1.0;   // inf - inf and NaN - NaN are NaN
  }
};

// The count of NaN or infinite values among the fields of a set at a cell
// (the health check of a whole state in one reduction).
template <class T>
struct NonFiniteCells {
  FieldSet<const T> fields;
  STRATA_HD double operator()(index_t i, index_t j, index_t k) const {
    double bad = 0;
    for (int c = 0; c < fields.count; ++c) {
      const T v = fields[c](i, j, k);
      bad += (v - v == v - v) ? 0.0 : 1.0;
    }
    return bad;
  }
};

// A cell's value: global_sum gives a field's total, global_max its maximum.
template <class T>
struct CellValue {
  FieldView<const T> f;
  STRATA_HD double operator()(index_t i, index_t j, index_t k) const { return static_cast<double>(f(i, j, k)); }
};

}  // namespace strata::kernels::grid
