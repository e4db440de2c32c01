// One index space for every grid kernel: a cell (i, j, k) = (x, y, z) of a
// rank's local indices (owned cells at [0, n) per axis, halo cells at
// [-h, 0) and [n, n + h)), a Box of them, the one decode of a linear index
// into a box, and a FieldView: a non-owning view of a field's storage that
// knows its strides and components (AMReX's IntVect, Box and Array4). With
// STRATA_BOUNDS_CHECK defined it also knows the box it may address (halo
// included), and an access outside it stops the program naming (i, j, k)
// and the component.
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(STRATA_BOUNDS_CHECK)
#include <cstdio>
#include <cstdlib>
#endif

#include "kernels/core/hd.hpp"
#include "kernels/core/op_costs.hpp"
#include "kernels/core/work.hpp"

namespace strata::kernels::grid {

using index_t = std::int64_t;

// An integer triple (i, j, k), axis a at [a].
struct IntVect {
  index_t v[3] = {0, 0, 0};
  STRATA_HD constexpr index_t& operator[](int a) { return v[a]; }
  STRATA_HD constexpr index_t operator[](int a) const { return v[a]; }
};

// The cells lo[a] <= index < lo[a] + n[a] on each axis a.
struct Box {
  IntVect lo;
  IntVect n{{1, 1, 1}};
  STRATA_HD index_t size() const { return n[0] * n[1] * n[2]; }
  STRATA_HD bool contains(index_t i, index_t j, index_t k) const {
    return i >= lo[0] && i < lo[0] + n[0] && j >= lo[1] && j < lo[1] + n[1] && k >= lo[2] && k < lo[2] + n[2];
  }
  // The position of cell (i, j, k) in the box, x fastest (decode's inverse).
  STRATA_HD STRATA_FORCEINLINE index_t linear(index_t i, index_t j, index_t k) const {
    return ((k - lo[2]) * n[1] + j - lo[1]) * n[0] + i - lo[0];
  }
};

// The cell at linear position idx of a box, x fastest.
STRATA_HD STRATA_FORCEINLINE IntVect decode(const Box& b, index_t idx) {
  const index_t rest = idx / b.n[0];
  return {{b.lo[0] + idx % b.n[0], b.lo[1] + rest % b.n[1], b.lo[2] + rest / b.n[1]}};
}

// What a bounds-checked build knows of a view beyond its strides: the
// stored box (owned cells and halos) and the component count.
#if defined(STRATA_BOUNDS_CHECK)
struct Bounds {
  Box box{{{0, 0, 0}}, {{0, 0, 0}}};
  int ncomp = 0;
  STRATA_HD void check(index_t i, index_t j, index_t k, int c) const {
    if (box.contains(i, j, k) && c >= 0 && c < ncomp) return;
    printf("FieldView: cell (%lld, %lld, %lld) component %d outside the bounds lo (%lld, %lld, %lld) n (%lld, %lld, "
           "%lld), %d component(s)\n",
           static_cast<long long>(i), static_cast<long long>(j), static_cast<long long>(k), c,
           static_cast<long long>(box.lo[0]), static_cast<long long>(box.lo[1]), static_cast<long long>(box.lo[2]),
           static_cast<long long>(box.n[0]), static_cast<long long>(box.n[1]), static_cast<long long>(box.n[2]), ncomp);
#if defined(__CUDA_ARCH__)
    __trap();
#else
    std::abort();
#endif
  }
};
#define STRATA_FIELD_BOUNDS(...) , __VA_ARGS__
#else
#define STRATA_FIELD_BOUNDS(...)
#endif

// A field's storage seen as cells: x fastest, then y, then z, then the
// component. A Release view is a pointer and three strides, so a functor
// holding a dozen views stays small enough to live in registers; a
// bounds-checked build adds its Bounds and checks every access. The member
// is there or not for the whole build (STRATA_BOUNDS_CHECK is a project-wide
// definition), never an empty member marked [[no_unique_address]]: nvcc's
// device code gives such a member bytes that its host pass does not, and a
// kernel then reads every later member at the wrong offset (docs/gpu.md).
template <class T>
struct FieldView {
  T* origin = nullptr;   // cell (0, 0, 0) of component 0
  index_t sy = 0;        // stride of y
  index_t sz = 0;        // stride of z
  index_t sc = 0;        // stride of a component
#if defined(STRATA_BOUNDS_CHECK)
  Bounds bounds;
#endif

  STRATA_HD STRATA_FORCEINLINE T& operator()(index_t i, index_t j, index_t k = 0, int c = 0) const {
#if defined(STRATA_BOUNDS_CHECK)
    bounds.check(i, j, k, c);
#endif
    return origin[c * sc + k * sz + j * sy + i];
  }
  // Component c alone (a one-component view of the same storage).
  STRATA_HD FieldView component(int c) const {
    FieldView v = *this;
    v.origin += c * sc;
#if defined(STRATA_BOUNDS_CHECK)
    v.bounds.ncomp = 1;
#endif
    return v;
  }
  // A read-only view of the same cells (only a view of non-const T converts).
  template <class U = T>
    requires(!std::is_const_v<U>)
  STRATA_HD operator FieldView<const U>() const {
    return {origin, sy, sz, sc STRATA_FIELD_BOUNDS(bounds)};
  }
};

// The one storage layout: `ncomp` components of the cells of `stored`,
// starting at `data`, x fastest (element stored.linear(i, j, k) + c *
// stored.size()).
template <class T>
STRATA_HD FieldView<T> field_view(T* data, const Box& stored, int ncomp = 1) {
  const index_t sy = stored.n[0], sz = sy * stored.n[1];
  static_cast<void>(ncomp);   // known to a bounds-checked view only
  return {data + stored.linear(0, 0, 0), sy, sz, sz * stored.n[2] STRATA_FIELD_BOUNDS(Bounds{stored, ncomp})};
}

// Up to kMaxFields fields (or components) of one layout, one grid's:
// their origins and the shared strides (halo messages, health checks).
inline constexpr int kMaxFields = 8;

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

}  // namespace strata::kernels::grid
