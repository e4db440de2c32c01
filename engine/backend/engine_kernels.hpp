// The engine's own kernels: a kernel list (engine/backend/parallel.hpp).
#pragma once

#include "engine/backend/parallel.hpp"
#include "kernels/rng/philox_batch.hpp"

#define STRATA_ENGINE_KERNELS(M, Real) STRATA_ONCE(Real, STRATA_FOR(M, strata::rng::PhiloxBatch))
STRATA_DECLARE_KERNELS(STRATA_ENGINE_KERNELS)
