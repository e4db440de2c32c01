// CUDA instantiations of the grid-layer test functors.
#include "engine/backend/cuda_parallel.cuh"
#include "engine/grid/grid_instantiate.hpp"
#include "tests/mpi/grid_test_functors.hpp"

STRATA_GRID_INSTANTIATE_FOR(strata::test::FillCells<double>)
STRATA_GRID_INSTANTIATE_FOR(strata::test::FillCells<float>)
STRATA_GRID_INSTANTIATE_FOR(strata::test::WideStencil<double>)
STRATA_GRID_INSTANTIATE_FOR(strata::test::WideStencil<float>)
STRATA_GRID_INSTANTIATE_SUM(strata::test::CellValue<double>)
STRATA_GRID_INSTANTIATE_SUM(strata::test::CellValue<float>)
// global_max of the labels (the exact-sum test).
STRATA_GRID_INSTANTIATE_MAX(strata::test::CellValue<double>)
