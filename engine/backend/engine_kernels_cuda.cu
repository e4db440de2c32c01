// CUDA instantiations of the engine's own kernels.
#include "engine/backend/cuda_parallel.cuh"
#include "engine/runtime/rng_check.hpp"

STRATA_CUDA_INSTANTIATE_FOR(strata::PhiloxKatKernel)
