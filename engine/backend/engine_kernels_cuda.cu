// CUDA instantiations of the engine's own kernels.
#include "engine/backend/cuda_parallel.cuh"
#include "kernels/rng/philox_batch.hpp"

STRATA_CUDA_INSTANTIATE_FOR(strata::rng::PhiloxBatch)
