// CUDA instantiations of the pricing kernels (the host ones need nothing:
// the templates are instantiated where they are called).
#include "engine/backend/cuda_parallel.cuh"
#include "kernels/pricing/european.hpp"
#include "kernels/pricing/exercise_states.hpp"
#include "kernels/pricing/path_group.hpp"
#include "kernels/pricing/sample_blocks.hpp"

using strata::kernels::pricing::EuropeanGbm;
using strata::kernels::pricing::ExerciseStates;
using strata::kernels::pricing::PathGroupKernel;
using strata::kernels::pricing::GroupLaneTree;
using strata::kernels::pricing::LaneMoments;
using strata::kernels::pricing::LaneMomentsBatched;
using strata::kernels::pricing::LaneTree;

STRATA_CUDA_INSTANTIATE_FOR(LaneMoments<EuropeanGbm<double>>)   // tests/unit/test_pricing.cpp
STRATA_CUDA_INSTANTIATE_FOR(LaneMomentsBatched<EuropeanGbm<double>>)
STRATA_CUDA_INSTANTIATE_FOR(LaneMomentsBatched<EuropeanGbm<float>>)
STRATA_CUDA_INSTANTIATE_FOR(LaneTree)
STRATA_CUDA_INSTANTIATE_FOR(PathGroupKernel<double>)
STRATA_CUDA_INSTANTIATE_FOR(PathGroupKernel<float>)
STRATA_CUDA_INSTANTIATE_FOR(GroupLaneTree)
STRATA_CUDA_INSTANTIATE_FOR(ExerciseStates<double>)
STRATA_CUDA_INSTANTIATE_FOR(ExerciseStates<float>)
