#include "engine/backend/cuda_parallel.cuh"
#include "kernels/core/exact_sum.hpp"
#include "tests/unit/test_functors.hpp"

STRATA_CUDA_INSTANTIATE_REDUCE(double, strata::test::Harmonic, strata::Plus)
STRATA_CUDA_INSTANTIATE_REDUCE(double, strata::test::NaNAt, strata::kernels::MaxOp)
