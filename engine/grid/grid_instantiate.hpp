// The CUDA instantiation macros of the grid layer, alone: a model's *.cu
// file includes this and engine/backend/cuda_parallel.cuh, not grid.hpp,
// whose runtime headers pull in toml++, which nvcc 13's front end cannot
// compile (g++ rejects its lambdas after cudafe++).
#pragma once

#include "kernels/core/exact_sum.hpp"
#include "kernels/grid/box_kernels.hpp"

// CUDA instantiation of a model's grid functors (in the model's *.cu file):
// for_box(F), global_sum(F) (exact_sum's two passes) and global_max(F).
#define STRATA_GRID_INSTANTIATE_FOR(...) STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::grid::BoxKernel<__VA_ARGS__>)
#define STRATA_GRID_INSTANTIATE_SUM(...)                                                                            \
  STRATA_CUDA_INSTANTIATE_REDUCE(double,                                                                            \
                                 strata::kernels::Magnitude<strata::kernels::grid::BoxValue<__VA_ARGS__>>,          \
                                 strata::kernels::MaxOp)                                                            \
  STRATA_CUDA_INSTANTIATE_REDUCE(strata::kernels::Fixed128,                                                         \
                                 strata::kernels::Quantised<strata::kernels::grid::BoxValue<__VA_ARGS__>>,          \
                                 strata::kernels::Fixed128Plus)
#define STRATA_GRID_INSTANTIATE_MAX(...) \
  STRATA_CUDA_INSTANTIATE_REDUCE(double, strata::kernels::grid::BoxValue<__VA_ARGS__>, strata::kernels::MaxOp)
