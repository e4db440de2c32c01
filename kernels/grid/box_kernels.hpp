// Launching a per-cell functor over a Box: the launcher, not the functor,
// owns the loop (AMReX's ParallelFor(Box, ncomp, f)). A functor is called
// f(i, j, k) for every cell, or, a per-component one, f.component(c)(i, j,
// k) for every cell and c in [0, ncomp), once each, in any order: on CUDA one thread
// per (cell, component) from the one decode of the linear index; on the
// host (host_for, chosen by engine/backend's parallel_for) OpenMP over the
// rows of x and a vectorised loop along each row, so no index division per
// cell. Both compute the same values, so results are bitwise the same.
#pragma once

#include <cstdint>
#include <functional>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/grid/field_view.hpp"

namespace strata::kernels::grid {

template <class F>
inline constexpr bool kPerComponent = requires(const F& f) { f.component(0); };

// The device work of one cell (or cell and component) of a cell functor:
// its own `static constexpr Work cell_work()`, plus what a CUDA thread
// spends finding its cell from its linear index (decode: a 64-bit
// division and remainder by n[0], another by n[1], and one more by the
// cell count for a per-component functor).
template <class F>
constexpr Work cell_work_of() {
  constexpr double decode = 2 * kDivide64IntOps + 10 + (kPerComponent<F> ? kDivide64IntOps : 0);
  if constexpr (requires { F::cell_work(); }) {
    return F::cell_work() + Work{0, 0, decode};
  } else {
    return Work{0, 0, decode};
  }
}

template <class F>
struct BoxKernel {
  Box box;
  F f;
  int ncomp = 1;   // components: only for a functor with component(c)

  Work work(std::int64_t n) const { return cell_work_of<F>() * static_cast<double>(n); }

  STRATA_HD STRATA_FORCEINLINE void operator()(index_t idx) const {
    const index_t cells = box.size();
    const index_t c = kPerComponent<F> ? idx / cells : 0;
    const IntVect p = decode(box, idx - c * cells);
    if constexpr (kPerComponent<F>) {
      f.component(static_cast<int>(c))(p[0], p[1], p[2]);
    } else {
      f(p[0], p[1], p[2]);
    }
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
      const index_t paired = planes / 2 * 2 * n1, rows = planes * n1;
#pragma omp parallel for schedule(static)
      for (index_t r = 0; r < rows; ++r) {
        if (r < paired) {
          const index_t q = r % (2 * n1);
          row(r / (2 * n1) * 2 + q % 2, q / 2);
        } else {
          row(planes - 1, r - paired);
        }
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

// f(i, j, k) of the cell at linear position idx of a box (what
// parallel_reduce reduces).
template <class F>
struct BoxValue {
  Box box;
  F f;
  Work work(std::int64_t n) const { return cell_work_of<F>() * static_cast<double>(n); }
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

// A cell's value: global_sum gives a field's total, global_max its maximum.
template <class T>
struct CellValue {
  FieldView<const T> f;
  STRATA_HD double operator()(index_t i, index_t j, index_t k) const { return static_cast<double>(f(i, j, k)); }
};

}  // namespace strata::kernels::grid
