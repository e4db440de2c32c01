// The shallow_water model's kernel list (engine/backend/parallel.hpp).
#pragma once

#include "engine/grid/grid_instantiate.hpp"
#include "kernels/stencil/shallow_water.hpp"

#define STRATA_SHALLOW_WATER_KERNELS(M, Real)                             \
  STRATA_GRID_FOR(M, strata::kernels::stencil::ShallowWaterStage<Real>)   \
  STRATA_GRID_FOR(M, strata::kernels::stencil::NormalVelocityWall<Real>)  \
  STRATA_GRID_LIST_FOR(M, strata::kernels::stencil::ShallowWaterWalls<Real>) \
  STRATA_GRID_FOR(M, strata::kernels::stencil::VorticityAtCentres<Real>)  \
  STRATA_GRID_SUM(M, strata::kernels::stencil::EnergyOf<Real>)            \
  STRATA_GRID_SUM(M, strata::kernels::stencil::EnstrophyOf<Real>)         \
  STRATA_GRID_MAX(M, strata::kernels::stencil::CourantOf<Real>)
STRATA_DECLARE_KERNELS(STRATA_SHALLOW_WATER_KERNELS)
