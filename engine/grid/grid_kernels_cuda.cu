// CUDA instantiations of the grid layer's own kernels (halo packing,
// self-periodic halo copies and physical boundaries), for both precisions.
#include "engine/backend/cuda_parallel.cuh"
#include "engine/backend/parallel.hpp"
#include "kernels/stencil/grid_view.hpp"

STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::PackBox<double>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::PackBox<float>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::UnpackBox<double>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::UnpackBox<float>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::PeriodicWrap<double>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::PeriodicWrap<float>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::FillSide<double>)
STRATA_CUDA_INSTANTIATE_FOR(strata::kernels::stencil::FillSide<float>)
STRATA_CUDA_INSTANTIATE_REDUCE(double, strata::kernels::stencil::BoxValue<strata::kernels::stencil::NonFiniteCell<double>>,
                               strata::Plus)
STRATA_CUDA_INSTANTIATE_REDUCE(double, strata::kernels::stencil::BoxValue<strata::kernels::stencil::NonFiniteCell<float>>,
                               strata::Plus)
