// CUDA instantiations of the diffusion model's kernels.
#include "engine/backend/cuda_parallel.cuh"
#include "engine/grid/grid_instantiate.hpp"
#include "kernels/stencil/diffusion.hpp"

using namespace strata::kernels::stencil;

STRATA_GRID_INSTANTIATE_FOR(HeatStep<double>)
STRATA_GRID_INSTANTIATE_FOR(HeatStep<float>)
STRATA_GRID_INSTANTIATE_FOR(GaussianInit<double>)
STRATA_GRID_INSTANTIATE_FOR(GaussianInit<float>)
STRATA_CUDA_INSTANTIATE_FOR(GaussianAxisFactors)
STRATA_GRID_INSTANTIATE_SUM(GaussianError2Separable<double>)
STRATA_GRID_INSTANTIATE_SUM(GaussianError2Separable<float>)
STRATA_GRID_INSTANTIATE_SUM(CellOf<double>)
STRATA_GRID_INSTANTIATE_SUM(CellOf<float>)
STRATA_GRID_INSTANTIATE_MAX(CellOf<double>)
STRATA_GRID_INSTANTIATE_MAX(CellOf<float>)
