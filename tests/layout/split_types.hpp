// Types built to have one layout on the host and another in nvcc's device
// code, one for each construct known to split a layout (docs/gpu.md), and a
// plain one that must not: the layout guard's own check
// (cmake/strata_layout.cmake runs scripts/gpu/layout-guard --expect-split
// on them before it checks the real kernel lists). Never launched.
#pragma once

#include "engine/backend/parallel.hpp"

namespace strata::layout_split {

struct Tag {
  Tag() = default;   // empty and not an aggregate, like a Release FieldView's Bounds once was
};

// An empty last member: g++ and nvcc's host pass give it no bytes (32 in
// all); nvcc 13's device code gives the struct 64, and every member after
// it in an enclosing struct moves (FieldView's Bounds did this). An empty
// member between others happened to keep its layout there.
struct NoUniqueAddress {
  double* origin;
  long sy, sz, sc;
  [[no_unique_address]] Tag tag;
};

// A member only the device pass sees.
struct DeviceOnlyMember {
  double a;
#if defined(__CUDA_ARCH__)
  double device_only;
#endif
  int b;
};

// A member both of nvcc's passes see and g++ does not.
struct NvccOnlyMember {
  double a;
#if defined(__CUDACC__)
  float nvcc_only;
#endif
  double b;
};

// Nested plain data, arrays and a small member at the end: one layout everywhere.
struct Plain {
  struct Inner {
    float w[3];
    bool flag;
  } inner[2];
  const double* p;
  char c;
};

}  // namespace strata::layout_split

#define STRATA_LAYOUT_SPLIT_TYPES(M, Real)                       \
  STRATA_ONCE(Real, STRATA_FOR(M, strata::layout_split::NoUniqueAddress)  \
                        STRATA_FOR(M, strata::layout_split::DeviceOnlyMember) \
                        STRATA_FOR(M, strata::layout_split::NvccOnlyMember)   \
                        STRATA_FOR(M, strata::layout_split::Plain))
