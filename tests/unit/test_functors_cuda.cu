#include "engine/backend/cuda_parallel.cuh"
#include "tests/unit/test_functors.hpp"

STRATA_CUDA_INSTANTIATE_REDUCE(double, strata::test::Harmonic, strata::Plus)
