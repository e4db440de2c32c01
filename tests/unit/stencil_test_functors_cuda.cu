// CUDA instantiations of the stencil-kernel test functors.
#include "engine/backend/cuda_parallel.cuh"
#include "engine/grid/grid_instantiate.hpp"
#include "tests/unit/stencil_test_functors.hpp"

#define STRATA_STENCIL_TEST_LAUNCH(...) STRATA_GRID_INSTANTIATE_FOR(strata::test::Launched<__VA_ARGS__>)
STRATA_STENCIL_TEST_KERNELS(STRATA_STENCIL_TEST_LAUNCH, double)
STRATA_STENCIL_TEST_KERNELS(STRATA_STENCIL_TEST_LAUNCH, float)
#define STRATA_STENCIL_TEST_CELLS(...) STRATA_GRID_INSTANTIATE_FOR(strata::test::CellValues<__VA_ARGS__>)
STRATA_STENCIL_TEST_DIAGNOSTICS(STRATA_STENCIL_TEST_CELLS, double)
STRATA_STENCIL_TEST_DIAGNOSTICS(STRATA_STENCIL_TEST_CELLS, float)
STRATA_GRID_INSTANTIATE_FOR(strata::test::CountCalls)
