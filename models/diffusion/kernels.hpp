// The diffusion model's kernel list (engine/backend/parallel.hpp).
#pragma once

#include "engine/grid/grid_instantiate.hpp"
#include "kernels/stencil/diffusion.hpp"

#define STRATA_DIFFUSION_KERNELS(M, Real)                                         \
  STRATA_FOR(M, strata::kernels::stencil::PeriodicHeatStep<Real>)                 \
  STRATA_GRID_FOR(M, strata::kernels::stencil::GaussianInit<Real>)                \
  STRATA_ONCE(Real, STRATA_FOR(M, strata::kernels::stencil::GaussianAxisFactors)) \
  STRATA_GRID_SUM(M, strata::kernels::stencil::GaussianError2Separable<Real>)
STRATA_DECLARE_KERNELS(STRATA_DIFFUSION_KERNELS)
