// CUDA instantiations of the grid layer's own kernels (halo packing,
// self-periodic halo copies and physical boundaries), for both precisions.
#include "engine/backend/cuda_parallel.cuh"
#include "engine/backend/parallel.hpp"
#include "engine/grid/grid_instantiate.hpp"
#include "kernels/grid/halo.hpp"

#define STRATA_GRID_OWN_KERNELS(T)                                      \
  STRATA_GRID_INSTANTIATE_FOR(strata::kernels::grid::Pack<T>)           \
  STRATA_GRID_INSTANTIATE_FOR(strata::kernels::grid::Unpack<T>)         \
  STRATA_GRID_INSTANTIATE_FOR(strata::kernels::grid::PeriodicWrap<T>)   \
  STRATA_GRID_INSTANTIATE_FOR(strata::kernels::grid::FillSide<T>)       \
  STRATA_CUDA_INSTANTIATE_REDUCE(double, strata::kernels::grid::BoxValue<strata::kernels::grid::NonFiniteCell<T>>, \
                                 strata::Plus)
STRATA_GRID_OWN_KERNELS(double)
STRATA_GRID_OWN_KERNELS(float)
