// Launching a per-cell functor over a Box: the launcher, not the functor,
// owns the loop (AMReX's ParallelFor(Box, ncomp, f)). A functor is called
// f(i, j, k) for every cell, or f(i, j, k, c) for every cell and
// component c in [0, ncomp), once each, in any order: on CUDA one thread
// per (cell, component) from the one decode of the linear index; on the
// host (host_for, chosen by engine/backend's parallel_for) OpenMP over the
// rows of x and a vectorised loop along each row, so no index division per
// cell. Both compute the same values, so results are bitwise the same.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/grid/field_view.hpp"

namespace strata::kernels::grid {

template <class F>
inline constexpr bool kPerComponent = std::is_invocable_v<const F&, index_t, index_t, index_t, int>;

template <class F>
struct BoxKernel {
  Box box;
  F f;
  int ncomp = 1;   // components: only for a functor of (i, j, k, c)

  STRATA_HD STRATA_FORCEINLINE void operator()(index_t idx) const {
    if constexpr (kPerComponent<F>) {
      const index_t cells = box.size();
      const index_t c = idx / cells;
      const IntVect p = decode(box, idx - c * cells);
      f(p[0], p[1], p[2], static_cast<int>(c));
    } else {
      const IntVect p = decode(box, idx);
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
      for (index_t p = 0; p < planes; ++p)
        for (index_t j = 0; j < n1; ++j) row(p, j);
    }
  }

 private:
  // Row j (from box.lo[1]) of plane p, its cells a vectorised loop.
  STRATA_FORCEINLINE void row(index_t p, index_t j) const {
    const index_t c = p / box.n[2], k = box.lo[2] + p - c * box.n[2], y = box.lo[1] + j;
    const index_t first = box.lo[0], last = box.lo[0] + box.n[0];
    const F g = f;   // a local copy: no aliasing of the functor's pointers with the stores
    if constexpr (kPerComponent<F>) {
      const int ci = static_cast<int>(c);
#pragma omp simd
      for (index_t i = first; i < last; ++i) g(i, y, k, ci);
    } else {
#pragma omp simd
      for (index_t i = first; i < last; ++i) g(i, y, k);
    }
  }
};

// f(i, j, k) of the cell at linear position idx of a box (what
// parallel_reduce reduces: exact operations, so any order gives the bits).
template <class F>
struct BoxValue {
  Box box;
  F f;
  STRATA_HD STRATA_FORCEINLINE double operator()(index_t idx) const {
    const IntVect p = decode(box, idx);
    return f(p[0], p[1], p[2]);
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

}  // namespace strata::kernels::grid
