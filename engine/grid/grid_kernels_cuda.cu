// CUDA instantiations of the grid layer's own kernels (halo packing and
// physical boundaries), for both precisions.
#include "engine/backend/cuda_parallel.cuh"
#include "kernels/stencil/grid_view.hpp"

STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::PackBox<double>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::PackBox<float>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::UnpackBox<double>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::UnpackBox<float>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::FillSide<double>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::FillSide<float>)
