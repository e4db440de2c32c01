// The pricing model's kernel list (engine/backend/parallel.hpp).
#pragma once

#include "engine/backend/parallel.hpp"
#include "kernels/pricing/european.hpp"
#include "kernels/pricing/exercise_fit.hpp"
#include "kernels/pricing/exercise_states.hpp"
#include "kernels/pricing/path_group.hpp"
#include "kernels/pricing/sample_blocks.hpp"

#define STRATA_PRICING_KERNELS(M, Real)                                                                     \
  STRATA_FOR(M, strata::kernels::pricing::LaneMoments<strata::kernels::pricing::EuropeanGbm<Real>>)         \
  STRATA_FOR(M, strata::kernels::pricing::LaneMomentsBatched<strata::kernels::pricing::EuropeanGbm<Real>>)  \
  STRATA_FOR(M, strata::kernels::pricing::PathGroupKernel<Real>)                                            \
  STRATA_FOR(M, strata::kernels::pricing::ExerciseStates<Real>)                                             \
  STRATA_ONCE(Real, STRATA_FOR(M, strata::kernels::pricing::LaneTree)                                       \
                        STRATA_FOR(M, strata::kernels::pricing::GroupLaneTree)                             \
                        STRATA_FOR(M, strata::kernels::pricing::SampleMoments)                             \
                        STRATA_FOR(M, strata::kernels::pricing::FitDate)                                   \
                        STRATA_FOR(M, strata::kernels::pricing::FitLaneSums)                               \
                        STRATA_FOR(M, strata::kernels::pricing::FitLaneTree))
STRATA_DECLARE_KERNELS(STRATA_PRICING_KERNELS)
