// The grid layer's own per-cell kernels: halo messages (pack, unpack) and
// the halos of the periodic axes a rank spans alone, launched over box
// lists (BoxListKernel), and the halos of physical boundaries (over a box).
#pragma once

#include "kernels/core/hd.hpp"
#include "kernels/grid/box_kernels.hpp"
#include "kernels/grid/field_view.hpp"

namespace strata::kernels::grid {

// Halo messages: up to kMaxFields fields (components) of one grid (a
// FieldSet, field_view.hpp) packed into one buffer, link after link, in
// each link field after field, each the box x fastest.
// Launched over a BoxList (BoxListKernel), all links at once: box b is
// link b's box, `offset[b]` where its message starts in the buffer, and
// at(b, c, box) the cell functor of field c alone, so a launch resolves
// the field once per row, not per cell.
template <class T>
struct Pack {
  FieldSet<T> fields;
  T* buffer;
  index_t offset[kMaxBoxes];   // link b's message: offset[b] + c * box.size() for field c
  static constexpr Work cell_work() { return item_work<T>(2, 0); }   // a value read, one written
  struct One {
    FieldView<T> f;
    Box box;
    T* buffer;   // this field's part
    STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
      buffer[box.linear(i, j, k)] = f(i, j, k);
    }
  };
  STRATA_HD One at(int b, int c, const Box& box) const {
    return {fields[c], box, buffer + offset[b] + c * box.size()};
  }
};

template <class T>
struct Unpack {
  FieldSet<T> fields;
  const T* buffer;
  index_t offset[kMaxBoxes];
  static constexpr Work cell_work() { return item_work<T>(2, 0); }   // a value read, one written
  struct One {
    FieldView<T> f;
    Box box;
    const T* buffer;
    STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
      f(i, j, k) = buffer[box.linear(i, j, k)];
    }
  };
  STRATA_HD One at(int b, int c, const Box& box) const {
    return {fields[c], box, buffer + offset[b] + c * box.size()};
  }
};

// The periodic axes that one rank spans alone: their halos are the rank's
// own cells, copied without a message. Launched over one box per such
// axis (BoxListKernel, all at once), `low`, the halo slab below the axis,
// spanning the halos of the wrapped axes before it (so edges and corners
// are covered): each of its cells takes the owned cell it is an image of,
// and so does the matching cell of the slab above, + (n + h) e_axis. A
// halo cell's image is found on every wrapped axis at once (coordinates
// outside [0, n) moved by n), so every value read is an owned cell's and
// the boxes need no order: the same bits as wrapping axis by axis.
template <class T>
struct PeriodicWrap {
  FieldSet<T> fields;
  int axis[3];       // box b wraps axis[b]
  index_t n[3];      // owned cells per axis
  index_t h[3];      // halo width per axis
  bool wrapped[3];   // the axes wrapped (spanned alone by this rank, periodic)
  static constexpr Work cell_work() { return item_work<T>(4, 0); }   // two values read, two written
  struct One {
    FieldView<T> f;
    index_t n[3];
    bool wrapped[3];
    index_t ex, ey, ez, up;   // e_axis, and n + h along it
    STRATA_HD STRATA_FORCEINLINE index_t image(int a, index_t x) const {
      return !wrapped[a] ? x : (x < 0 ? x + n[a] : (x >= n[a] ? x - n[a] : x));
    }
    STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
      f(i, j, k) = f(image(0, i), image(1, j), image(2, k));
      const index_t i1 = i + ex * up, j1 = j + ey * up, k1 = k + ez * up;
      f(i1, j1, k1) = f(image(0, i1), image(1, j1), image(2, k1));
    }
  };
  STRATA_HD One at(int b, int c, const Box&) const {
    const int a = axis[b];
    return {fields[c], {n[0], n[1], n[2]}, {wrapped[0], wrapped[1], wrapped[2]}, a == 0, a == 1, a == 2, n[a] + h[a]};
  }
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
