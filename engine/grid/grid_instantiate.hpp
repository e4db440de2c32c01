// The grid layer's kernel list and the list entries for what a model
// launches through it (engine/backend/parallel.hpp). Apart from grid.hpp,
// whose toml++ nvcc 13's front end cannot compile.
#pragma once

#include "engine/backend/parallel.hpp"
#include "kernels/stencil/grid_view.hpp"

// for_box(device, box, F)
#define STRATA_GRID_FOR(M, ...) STRATA_FOR(M, strata::kernels::stencil::BoxKernel<__VA_ARGS__>)
// global_sum (a max of |F| for the scale, then the exact sum) and global_max
#define STRATA_GRID_SUM(M, ...)                                                                     \
  STRATA_GRID_MAX(M, strata::kernels::stencil::AbsValue<__VA_ARGS__>)                               \
  STRATA_REDUCE(M, strata::kernels::Fixed128, strata::kernels::Fixed128Plus,                        \
                strata::kernels::stencil::Quantised<__VA_ARGS__>)
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
