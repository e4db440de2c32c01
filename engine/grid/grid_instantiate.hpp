// The grid layer's kernel list (its own halo and boundary kernels) and the
// entries of a model's list for what it launches through the grid layer
// (engine/backend/parallel.hpp). Alone, without grid.hpp: the generated
// CUDA instantiation files include it, and grid.hpp's runtime headers pull
// in toml++, which nvcc 13's front end cannot compile.
#pragma once

#include "engine/backend/parallel.hpp"
#include "kernels/stencil/grid_view.hpp"

// for_box(device, box, F)
#define STRATA_GRID_FOR(M, ...) STRATA_FOR(M, strata::kernels::stencil::BoxKernel<__VA_ARGS__>)
// global_sum(grid, device, F): a max of |F| for the scale, then the exact sum
#define STRATA_GRID_SUM(M, ...)                                                                     \
  STRATA_GRID_MAX(M, strata::kernels::stencil::AbsValue<__VA_ARGS__>)                               \
  STRATA_REDUCE(M, strata::kernels::Fixed128, strata::kernels::Fixed128Plus,                        \
                strata::kernels::stencil::Quantised<__VA_ARGS__>)
// global_max(grid, device, F)
#define STRATA_GRID_MAX(M, ...) \
  STRATA_REDUCE(M, double, strata::kernels::MaxOp, strata::kernels::stencil::BoxValue<__VA_ARGS__>)

#define STRATA_GRID_KERNELS(M, Real)                                    \
  STRATA_FOR(M, strata::kernels::stencil::PackBox<Real>)                \
  STRATA_FOR(M, strata::kernels::stencil::UnpackBox<Real>)              \
  STRATA_FOR(M, strata::kernels::stencil::PeriodicWrap<Real>)           \
  STRATA_FOR(M, strata::kernels::stencil::FillSide<Real>)               \
  STRATA_REDUCE(M, double, strata::Plus,                                \
                strata::kernels::stencil::BoxValue<strata::kernels::stencil::NonFiniteCell<Real>>)
STRATA_DECLARE_KERNELS(STRATA_GRID_KERNELS)
