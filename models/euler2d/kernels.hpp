// The euler2d model's kernel list (engine/backend/parallel.hpp): every
// functor it launches through for_box, global_sum or global_max.
#pragma once

#include "engine/grid/grid_instantiate.hpp"
#include "kernels/stencil/euler2d.hpp"

#define STRATA_EULER2D_KERNELS(M, Real)                                      \
  STRATA_GRID_FOR(M, strata::kernels::stencil::euler2d::Flux<Real, 0>)       \
  STRATA_GRID_FOR(M, strata::kernels::stencil::euler2d::Flux<Real, 1>)       \
  STRATA_GRID_FOR(M, strata::kernels::stencil::euler2d::ApplyTendency<Real>) \
  STRATA_GRID_FOR(M, strata::kernels::stencil::euler2d::WallHaloZ<Real>)     \
  STRATA_GRID_FOR(M, strata::kernels::stencil::euler2d::InjectJet<Real>)     \
  STRATA_GRID_SUM(M, strata::kernels::stencil::euler2d::CellMass<Real>)      \
  STRATA_GRID_SUM(M, strata::kernels::stencil::euler2d::CellEnergy<Real>)    \
  STRATA_GRID_MAX(M, strata::kernels::stencil::euler2d::CellCourant<Real>)
STRATA_DECLARE_KERNELS(STRATA_EULER2D_KERNELS)
