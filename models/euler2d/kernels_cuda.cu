// CUDA instantiations of the euler2d model's kernels (every functor the
// model launches through for_box, global_sum or global_max).
#include "engine/backend/cuda_parallel.cuh"
#include "engine/grid/grid_instantiate.hpp"
#include "kernels/stencil/euler2d.hpp"

using namespace strata::kernels::stencil::euler2d;

STRATA_GRID_INSTANTIATE_FOR(FluxX<double>)
STRATA_GRID_INSTANTIATE_FOR(FluxX<float>)
STRATA_GRID_INSTANTIATE_FOR(FluxZ<double>)
STRATA_GRID_INSTANTIATE_FOR(FluxZ<float>)
STRATA_GRID_INSTANTIATE_FOR(ApplyTendency<double>)
STRATA_GRID_INSTANTIATE_FOR(ApplyTendency<float>)
STRATA_GRID_INSTANTIATE_FOR(WallHaloZ<double>)
STRATA_GRID_INSTANTIATE_FOR(WallHaloZ<float>)
STRATA_GRID_INSTANTIATE_FOR(InjectJet<double>)
STRATA_GRID_INSTANTIATE_FOR(InjectJet<float>)
STRATA_GRID_INSTANTIATE_SUM(CellMass<double>)
STRATA_GRID_INSTANTIATE_SUM(CellMass<float>)
STRATA_GRID_INSTANTIATE_SUM(CellEnergy<double>)
STRATA_GRID_INSTANTIATE_SUM(CellEnergy<float>)
STRATA_GRID_INSTANTIATE_MAX(CellCourant<double>)
STRATA_GRID_INSTANTIATE_MAX(CellCourant<float>)
