// The grid layer's own per-cell kernels, launched over boxes by
// BoxKernel: halo messages (pack, unpack), the halos of a periodic axis a
// rank spans alone, and the halos of physical boundaries.
#pragma once

#include "kernels/core/hd.hpp"
#include "kernels/grid/field_view.hpp"

namespace strata::kernels::grid {

// Halo messages: up to kMaxFields fields (components) of one grid packed
// into one buffer, field after field, each the box x fastest.
inline constexpr int kMaxFields = 8;

// Fields of one layout (one grid): their origins and the shared strides.
template <class T>
struct FieldSet {
  FieldView<T> layout;   // strides and bounds (one component)
  T* origin[kMaxFields] = {};
  int count = 0;
  STRATA_HD STRATA_FORCEINLINE FieldView<T> operator[](int c) const {
    FieldView<T> v = layout;
    v.origin = origin[c];
    return v;
  }
};

// A per-component kernel (BoxKernel with ncomp): component(c) is the cell
// functor of field c alone, so a launch resolves the field once per row,
// not per cell.
template <class T>
struct Pack {
  FieldSet<T> fields;
  Box box;
  T* buffer;
  static constexpr Work cell_work() { return item_work<T>(2, 0); }   // a value read, one written
  struct One {
    FieldView<T> f;
    Box box;
    T* buffer;   // this field's part
    STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
      buffer[box.linear(i, j, k)] = f(i, j, k);
    }
  };
  STRATA_HD One component(int c) const { return {fields[c], box, buffer + c * box.size()}; }
};

template <class T>
struct Unpack {
  FieldSet<T> fields;
  Box box;
  const T* buffer;
  static constexpr Work cell_work() { return item_work<T>(2, 0); }   // a value read, one written
  struct One {
    FieldView<T> f;
    Box box;
    const T* buffer;
    STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
      f(i, j, k) = buffer[box.linear(i, j, k)];
    }
  };
  STRATA_HD One component(int c) const { return {fields[c], box, buffer + c * box.size()}; }
};

// A periodic axis that one rank spans alone: its halo is the rank's own
// cells, copied without a message. Launched over `low`, the halo slab
// below the axis: each of its cells takes owned cell + n e_axis, and the
// matching cell of the slab above, + (n + h) e_axis, takes + h e_axis.
// Axis by axis in order, the later slabs spanning the earlier axes'
// halos, so edges and corners come out right.
template <class T>
struct PeriodicWrap {
  FieldSet<T> fields;
  int axis;
  index_t n;   // owned cells along `axis`
  index_t h;   // halo width along `axis`
  static constexpr Work cell_work() { return item_work<T>(2, 0); }   // a value read, one written
  struct One {
    FieldView<T> f;
    index_t ex, ey, ez, n, h;   // e_axis
    STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
      const index_t up = n + h;
      f(i, j, k) = f(i + ex * n, j + ey * n, k + ez * n);
      f(i + ex * up, j + ey * up, k + ez * up) = f(i + ex * h, j + ey * h, k + ez * h);
    }
  };
  STRATA_HD One component(int c) const { return {fields[c], axis == 0, axis == 1, axis == 2, n, h}; }
};

// Physical-boundary halos on one side of one axis, over a box of halo cells:
// `mirror` reflects about the boundary face (halo cell -1-m takes owned cell
// m) times `sign` (+1 even quantities, -1 a velocity normal to a wall);
// otherwise the nearest owned cell is copied (zero gradient, an open side).
template <class T>
struct FillSide {
  FieldView<T> f;
  int axis;         // 0 x, 1 y, 2 z
  index_t n_owned;  // owned cells along `axis`
  int side;         // 0 low, 1 high
  bool mirror;
  T sign;
  static constexpr Work cell_work() { return item_work<T>(2, 0); }   // a value read, one written
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
    const index_t a = axis == 0 ? i : (axis == 1 ? j : k);
    const index_t from = mirror ? (side == 0 ? -1 - a : 2 * n_owned - 1 - a) : (side == 0 ? 0 : n_owned - 1);
    f(i, j, k) = sign * f(axis == 0 ? from : i, axis == 1 ? from : j, axis == 2 ? from : k);
  }
};

}  // namespace strata::kernels::grid
