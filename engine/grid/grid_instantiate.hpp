// The grid layer's kernel list and the list entries for what a model
// launches through it (engine/backend/parallel.hpp). Apart from grid.hpp,
// whose toml++ nvcc 13's front end cannot compile.
#pragma once

#include "engine/backend/parallel.hpp"
#include "kernels/core/exact_sum.hpp"
#include "kernels/grid/box_kernels.hpp"
#include "kernels/grid/halo.hpp"

// for_box(device, box, F)
#define STRATA_GRID_FOR(M, ...) STRATA_FOR(M, strata::kernels::grid::BoxKernel<__VA_ARGS__>)
// for_boxes(device, boxes, F): F's at(b, c, box) over a BoxList
#define STRATA_GRID_LIST_FOR(M, ...) STRATA_FOR(M, strata::kernels::grid::BoxListKernel<__VA_ARGS__>)
// global_sum (a max of |F| for the scale, then the exact sum) and global_max
#define STRATA_GRID_SUM(M, ...)                                                                         \
  STRATA_REDUCE(M, double, strata::kernels::MaxOp,                                                      \
                strata::kernels::Magnitude<strata::kernels::grid::BoxValue<__VA_ARGS__>>)               \
  STRATA_REDUCE(M, strata::kernels::Fixed128, strata::kernels::Fixed128Plus,                            \
                strata::kernels::Quantised<strata::kernels::grid::BoxValue<__VA_ARGS__>>)
#define STRATA_GRID_MAX(M, ...) \
  STRATA_REDUCE(M, double, strata::kernels::MaxOp, strata::kernels::grid::BoxValue<__VA_ARGS__>)

// The grid layer's own kernels: halo packing, self-periodic copies, boundaries, a field's total and maximum.
#define STRATA_GRID_KERNELS(M, Real)                               \
  STRATA_GRID_LIST_FOR(M, strata::kernels::grid::Pack<Real>)       \
  STRATA_GRID_LIST_FOR(M, strata::kernels::grid::Unpack<Real>)     \
  STRATA_GRID_LIST_FOR(M, strata::kernels::grid::PeriodicWrap<Real>) \
  STRATA_GRID_FOR(M, strata::kernels::grid::SingleBox<strata::kernels::grid::Pack<Real>>)   \
  STRATA_GRID_FOR(M, strata::kernels::grid::SingleBox<strata::kernels::grid::Unpack<Real>>) \
  STRATA_GRID_FOR(M, strata::kernels::grid::FillSide<Real>)        \
  STRATA_GRID_SUM(M, strata::kernels::grid::CellValue<Real>)       \
  STRATA_GRID_MAX(M, strata::kernels::grid::CellValue<Real>)       \
  STRATA_REDUCE(M, double, strata::Plus,                           \
                strata::kernels::grid::BoxValue<strata::kernels::grid::NonFiniteCell<Real>>) \
  STRATA_REDUCE(M, double, strata::Plus,                           \
                strata::kernels::grid::BoxValue<strata::kernels::grid::NonFiniteCells<Real>>)
STRATA_DECLARE_KERNELS(STRATA_GRID_KERNELS)
