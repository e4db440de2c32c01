// What a stencil kernel sees of a distributed grid: a field of one rank
// (owned cells plus a halo of width h on every decomposed axis) addressed by
// local cell indices (i, j, k) = (x, y, z), owned cells at [0, n) per axis,
// halo cells at [-h, 0) and [n, n + h). Everything here is STRATA_HD so that
// the same functors run on the host (OpenMP) and CUDA backends.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/core/exact_sum.hpp"
#include "kernels/core/hd.hpp"

namespace strata::kernels::stencil {

using kernels::Fixed128;
using kernels::Fixed128Plus;
using kernels::MaxOp;

using index_t = std::int64_t;

// A field's memory layout on one rank: x fastest, then y, then z.
template <class T>
struct FieldView {
  T* origin = nullptr;   // cell (0, 0, 0)
  index_t sy = 0;        // stride of y
  index_t sz = 0;        // stride of z (0 in 2D)

  STRATA_HD STRATA_FORCEINLINE T& operator()(index_t i, index_t j, index_t k = 0) const {
    return origin[k * sz + j * sy + i];
  }
  // A read-only view of the same cells (only a view of non-const T converts).
  template <class U = T>
    requires(!std::is_const_v<U>)
  STRATA_HD operator FieldView<const U>() const {
    return {origin, sy, sz};
  }
};

// A box of local cell indices: lo[a] <= index < lo[a] + n[a] on axis a.
struct Box {
  index_t lo[3] = {0, 0, 0};
  index_t n[3] = {1, 1, 1};
  STRATA_HD index_t size() const { return n[0] * n[1] * n[2]; }
};

// parallel_for over a box: calls f(i, j, k) for every cell, x fastest.
template <class F>
struct BoxKernel {
  Box box;
  F f;
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t idx) const {
    const index_t i = idx % box.n[0];
    const index_t rest = idx / box.n[0];
    const index_t j = rest % box.n[1];
    const index_t k = rest / box.n[1];
    f(box.lo[0] + i, box.lo[1] + j, box.lo[2] + k);
  }
};

// The host's box launch: one call per row (j, k) of the box, the cells of
// the row in an inner contiguous loop that the compiler vectorises (the
// functor is elementwise by the contract of a box launch: every cell once,
// in any order, as on CUDA). Each cell computes exactly what BoxKernel's
// call does, so the results are bitwise the same; only the index arithmetic
// (a division per row instead of two per cell) and the vector width differ.
// Rows go by pairs of planes, (j, k), (j, k + 1), (j + 1, k), ...: a
// stencil reaching k - 1 and k + 1 then finds rows k and k + 1 of its
// input still in L1 for the second row of each pair, so its input streams
// through the caches twice per two planes instead of three times per
// plane (the 7-point heat step: +25% at 256^3 on a 2-core EPYC). An odd
// last plane goes alone, after the pairs.
template <class F>
struct BoxRows {
  Box box;
  F f;
  STRATA_FORCEINLINE void operator()(index_t row) const {
    const index_t n1 = box.n[1], paired = box.n[2] / 2 * 2 * n1;
    index_t j, k;
    if (row < paired) {
      const index_t r = row % (2 * n1);
      j = box.lo[1] + r / 2;
      k = box.lo[2] + row / (2 * n1) * 2 + r % 2;
    } else {
      j = box.lo[1] + row - paired;
      k = box.lo[2] + box.n[2] - 1;
    }
    const index_t first = box.lo[0], last = box.lo[0] + box.n[0];
    const F g = f;   // a local copy: no aliasing of the functor's pointers with the stores
#pragma omp simd
    for (index_t i = first; i < last; ++i) g(i, j, k);
  }
};

// parallel_reduce over a box of a per-cell double value.
template <class F>
struct BoxValue {
  Box box;
  F f;
  STRATA_HD STRATA_FORCEINLINE double operator()(index_t idx) const {
    const index_t i = idx % box.n[0];
    const index_t rest = idx / box.n[0];
    const index_t j = rest % box.n[1];
    const index_t k = rest / box.n[1];
    return f(box.lo[0] + i, box.lo[1] + j, box.lo[2] + k);
  }
};


// |value|, propagating NaN (NaN compares false with everything; keep it).
template <class F>
struct AbsValue {
  F f;
  STRATA_HD STRATA_FORCEINLINE double operator()(index_t i, index_t j, index_t k) const {
    const double v = f(i, j, k);
    return v < 0 ? -v : v;
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


// A cell's value times 2^scale, rounded to the nearest integer (ties to
// even, as llrint and __double2ll_rn do), as a Fixed128.
template <class F>
struct Quantised {
  Box box;
  F f;
  double scale;   // a power of two: the multiplication is exact
  STRATA_HD STRATA_FORCEINLINE Fixed128 operator()(index_t idx) const {
    const index_t i = idx % box.n[0];
    const index_t rest = idx / box.n[0];
    const index_t j = rest % box.n[1];
    const index_t k = rest / box.n[1];
    return at(box.lo[0] + i, box.lo[1] + j, box.lo[2] + k);
  }
  // The cell (i, j, k) itself (a loop over the box that knows its indices).
  STRATA_HD STRATA_FORCEINLINE Fixed128 at(index_t i, index_t j, index_t k) const {
    return quantise(f(i, j, k) * scale);
  }
};

// Halo messages: up to kMaxFields fields of one type packed into one buffer,
// field after field, each the box x fastest.
inline constexpr int kMaxFields = 8;

template <class T>
struct FieldSet {
  FieldView<T> f[kMaxFields];
  int count = 0;
};

template <class T>
struct PackBox {
  FieldSet<T> fields;
  Box box;
  T* buffer;
  STRATA_HD void operator()(index_t idx) const {
    const index_t cells = box.size();
    const index_t field = idx / cells;
    const index_t c = idx % cells;
    const index_t i = c % box.n[0];
    const index_t rest = c / box.n[0];
    buffer[idx] = fields.f[field](box.lo[0] + i, box.lo[1] + rest % box.n[1], box.lo[2] + rest / box.n[1]);
  }
};

template <class T>
struct UnpackBox {
  FieldSet<T> fields;
  Box box;
  const T* buffer;
  STRATA_HD void operator()(index_t idx) const {
    const index_t cells = box.size();
    const index_t field = idx / cells;
    const index_t c = idx % cells;
    const index_t i = c % box.n[0];
    const index_t rest = c / box.n[0];
    fields.f[field](box.lo[0] + i, box.lo[1] + rest % box.n[1], box.lo[2] + rest / box.n[1]) = buffer[idx];
  }
};

// A periodic axis that one rank spans alone: its halo is the rank's own
// cells, copied without a message. `low` is the halo slab below the axis;
// each of its cells c takes owned cell c + n e_axis, and the matching cell
// of the slab above, c + (n + h) e_axis, takes c + h e_axis. Axis by axis
// in order, the later slabs spanning the earlier axes' halos, so edges and
// corners come out right.
template <class T>
struct PeriodicWrap {
  FieldSet<T> fields;
  Box low;
  int axis;
  index_t n;   // owned cells along `axis`
  STRATA_HD void operator()(index_t idx) const {
    const index_t cells = low.size();
    const index_t field = idx / cells;
    const index_t c = idx % cells;
    const index_t rest = c / low.n[0];
    index_t at[3] = {low.lo[0] + c % low.n[0], low.lo[1] + rest % low.n[1], low.lo[2] + rest / low.n[1]};
    const FieldView<T>& f = fields.f[field];
    const index_t h = low.n[axis];
    index_t from[3] = {at[0], at[1], at[2]};
    from[axis] += n;
    f(at[0], at[1], at[2]) = f(from[0], from[1], from[2]);
    at[axis] += n + h;
    from[axis] = at[axis] - n;
    f(at[0], at[1], at[2]) = f(from[0], from[1], from[2]);
  }
};

// The host twins of the halo functors above: one call per row (field, j, k)
// of the box, the row's cells a contiguous loop (grid_impl.hpp's host_rows
// launches them), so no index division per cell. The same buffer layout
// (the box x fastest, field after field) and the same values.
template <class T>
struct PackRow {
  FieldSet<T> fields;
  Box box;
  T* buffer;
  STRATA_FORCEINLINE void operator()(int field, index_t j, index_t k) const {
    const T* src = &fields.f[field](box.lo[0], j, k);
    T* dst = buffer + ((field * box.n[2] + k - box.lo[2]) * box.n[1] + j - box.lo[1]) * box.n[0];
    for (index_t i = 0; i < box.n[0]; ++i) dst[i] = src[i];
  }
};

template <class T>
struct UnpackRow {
  FieldSet<T> fields;
  Box box;
  const T* buffer;
  STRATA_FORCEINLINE void operator()(int field, index_t j, index_t k) const {
    T* dst = &fields.f[field](box.lo[0], j, k);
    const T* src = buffer + ((field * box.n[2] + k - box.lo[2]) * box.n[1] + j - box.lo[1]) * box.n[0];
    for (index_t i = 0; i < box.n[0]; ++i) dst[i] = src[i];
  }
};

// PeriodicWrap by rows of its `low` slab: along x both halos of the row
// (its first and last cache lines) in one visit.
template <class T>
struct PeriodicWrapRow {
  FieldSet<T> fields;
  Box low;
  int axis;
  index_t n;
  STRATA_FORCEINLINE void operator()(int field, index_t j, index_t k) const {
    const FieldView<T>& f = fields.f[field];
    const index_t h = low.n[axis];
    const index_t ex = axis == 0, ey = axis == 1, ez = axis == 2, i0 = low.lo[0];
    T* lo_dst = &f(i0, j, k);
    const T* lo_src = &f(i0 + ex * n, j + ey * n, k + ez * n);
    T* hi_dst = &f(i0 + ex * (n + h), j + ey * (n + h), k + ez * (n + h));
    const T* hi_src = &f(i0 + ex * h, j + ey * h, k + ez * h);
    for (index_t i = 0; i < low.n[0]; ++i) {
      lo_dst[i] = lo_src[i];
      hi_dst[i] = hi_src[i];
    }
  }
};

// Physical-boundary halos on one side of one axis, over a box of halo cells:
// `mirror` reflects about the boundary face (halo cell -1-m takes owned cell
// m) times `sign` (+1 even quantities, -1 a velocity normal to a wall);
// otherwise the nearest owned cell is copied (zero gradient, an open side).
template <class T>
struct FillSide {
  FieldView<T> f;
  Box box;          // the halo cells to fill
  int axis;         // 0 x, 1 y, 2 z
  index_t n_owned;  // owned cells along `axis`
  int side;         // 0 low, 1 high
  bool mirror;
  T sign;
  STRATA_HD void operator()(index_t idx) const {
    const index_t c0 = idx % box.n[0];
    const index_t rest = idx / box.n[0];
    index_t at[3] = {box.lo[0] + c0, box.lo[1] + rest % box.n[1], box.lo[2] + rest / box.n[1]};
    index_t from[3] = {at[0], at[1], at[2]};
    const index_t a = at[axis];
    if (mirror) {
      from[axis] = side == 0 ? -1 - a : 2 * n_owned - 1 - a;
    } else {
      from[axis] = side == 0 ? 0 : n_owned - 1;
    }
    f(at[0], at[1], at[2]) = sign * f(from[0], from[1], from[2]);
  }

  // The source index along `axis` of halo index a.
  STRATA_HD index_t source(index_t a) const {
    if (mirror) return side == 0 ? -1 - a : 2 * n_owned - 1 - a;
    return side == 0 ? 0 : n_owned - 1;
  }
};

// FillSide by rows (field 0 only; host_rows launches it): along y or z a
// row copies one owned row, along x the row is the halo's few cells.
template <class T>
struct FillSideRow {
  FillSide<T> side;
  STRATA_FORCEINLINE void operator()(int, index_t j, index_t k) const {
    const Box& b = side.box;
    const FieldView<T>& f = side.f;
    T* dst = &f(b.lo[0], j, k);
    if (side.axis == 0) {
      for (index_t i = 0; i < b.n[0]; ++i) dst[i] = side.sign * f(side.source(b.lo[0] + i), j, k);
    } else {
      const T* src = side.axis == 1 ? &f(b.lo[0], side.source(j), k) : &f(b.lo[0], j, side.source(k));
      for (index_t i = 0; i < b.n[0]; ++i) dst[i] = side.sign * src[i];
    }
  }
};

}  // namespace strata::kernels::stencil
