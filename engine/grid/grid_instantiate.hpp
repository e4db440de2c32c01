// The CUDA instantiation macros of the grid layer, alone: a model's *.cu
// file includes this and engine/backend/cuda_parallel.cuh, not grid.hpp,
// whose runtime headers pull in toml++, which nvcc 13's front end cannot
// compile (g++ rejects its lambdas after cudafe++).
#pragma once

#include "kernels/stencil/grid_view.hpp"

// CUDA instantiation of a model's grid functors (in the model's *.cu file).
#define STRATA_GRID_INSTANTIATE_FOR(...) \
  STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::BoxKernel<__VA_ARGS__>)
#define STRATA_GRID_INSTANTIATE_SUM(...)                                                               \
  STRATA_CUDA_INSTANTIATE_REDUCE(double,                                                               \
                                 strata::kernels::stencil::BoxValue<strata::kernels::stencil::AbsValue< \
                                     __VA_ARGS__>>,                                                    \
                                 strata::kernels::MaxOp)                                      \
  STRATA_CUDA_INSTANTIATE_REDUCE(strata::kernels::Fixed128,                                   \
                                 strata::kernels::stencil::Quantised<__VA_ARGS__>,                     \
                                 strata::kernels::Fixed128Plus)
#define STRATA_GRID_INSTANTIATE_MAX(...)                                                      \
  STRATA_CUDA_INSTANTIATE_REDUCE(double, strata::kernels::stencil::BoxValue<__VA_ARGS__>, \
                                 strata::kernels::MaxOp)
