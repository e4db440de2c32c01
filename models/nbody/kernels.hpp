// The nbody model's kernel list (engine/backend/parallel.hpp).
#pragma once

#include "engine/backend/parallel.hpp"
#include "kernels/particles/gravity.hpp"

#define STRATA_NBODY_KERNELS(M, Real)                                \
  STRATA_FOR(M, strata::kernels::particles::ClearSums<Real>)         \
  STRATA_FOR(M, strata::kernels::particles::BodyKick<Real>)          \
  STRATA_FOR(M, strata::kernels::particles::BodyDrift<Real>)
STRATA_DECLARE_KERNELS(STRATA_NBODY_KERNELS)
