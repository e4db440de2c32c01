// CUDA instantiations of the shallow_water model's kernels.
#include "engine/backend/cuda_parallel.cuh"
#include "engine/grid/grid_instantiate.hpp"
#include "kernels/stencil/shallow_water.hpp"

using namespace strata::kernels::stencil;

STRATA_GRID_INSTANTIATE_FOR(ShallowWaterStage<double>)
STRATA_GRID_INSTANTIATE_FOR(ShallowWaterStage<float>)
STRATA_GRID_INSTANTIATE_FOR(NormalVelocityWall<double>)
STRATA_GRID_INSTANTIATE_FOR(NormalVelocityWall<float>)
STRATA_GRID_INSTANTIATE_FOR(VorticityAtCentres<double>)
STRATA_GRID_INSTANTIATE_FOR(VorticityAtCentres<float>)
STRATA_GRID_INSTANTIATE_SUM(DepthOf<double>)
STRATA_GRID_INSTANTIATE_SUM(DepthOf<float>)
STRATA_GRID_INSTANTIATE_SUM(EnergyOf<double>)
STRATA_GRID_INSTANTIATE_SUM(EnergyOf<float>)
STRATA_GRID_INSTANTIATE_SUM(EnstrophyOf<double>)
STRATA_GRID_INSTANTIATE_SUM(EnstrophyOf<float>)
STRATA_GRID_INSTANTIATE_MAX(CourantOf<double>)
STRATA_GRID_INSTANTIATE_MAX(CourantOf<float>)
