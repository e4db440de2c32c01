// Functors of the stencil-kernel tests (test_stencil_kernels.cpp), and
// their kernel list (engine/backend/parallel.hpp).
#pragma once

#include "engine/grid/grid_instantiate.hpp"
#include "kernels/stencil/diffusion.hpp"
#include "kernels/stencil/euler2d.hpp"
#include "kernels/grid/field_view.hpp"
#include "kernels/stencil/shallow_water.hpp"

namespace strata::test {

using kernels::grid::FieldView;
using kernels::grid::index_t;

// A kernel as the tests launch it: a type of the tests' own, so its CUDA
// instantiation does not depend on (or collide with) the models' lists.
template <class K>
struct Launched {
  K k;
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t c) const { k(i, j, c); }
};

// Counts the calls per cell; atomic on CUDA, where two threads handed the
// same cell by a wrong index decode would otherwise race and hide it.
struct CountCalls {
  FieldView<int> hits;
  STRATA_HD void operator()(index_t i, index_t j, index_t k) const {
#if defined(__CUDA_ARCH__)
    atomicAdd(&hits(i, j, k), 1);
#else
    ++hits(i, j, k);
#endif
  }
};

// CountCalls over a box list (BoxListKernel): component c of `hits`
// counts component c's calls; box b adds b + 1, so a cell handed to the
// wrong box shows.
struct CountListCalls {
  FieldView<int> hits;   // all components
  struct One {
    FieldView<int> hits;
    int weight;
    STRATA_HD void operator()(index_t i, index_t j, index_t k) const {
#if defined(__CUDA_ARCH__)
      atomicAdd(&hits(i, j, k), weight);
#else
      hits(i, j, k) += weight;
#endif
    }
  };
  STRATA_HD One at(int b, int c, const kernels::grid::Box&) const { return {hits.component(c), b + 1}; }
};

// A per-cell diagnostic (what global_sum / global_max reduce) written to
// a field, so each cell's value can be compared on every backend.
template <class F>
struct CellValues {
  F f;
  FieldView<double> out;
  STRATA_HD void operator()(index_t i, index_t j, index_t k) const { out(i, j, k) = f(i, j, k); }
};

}  // namespace strata::test

// Every kernel the tests launch and every per-cell diagnostic they
// evaluate, for each precision.
#define STRATA_STENCIL_TEST_LAUNCH(M, ...) STRATA_GRID_FOR(M, strata::test::Launched<__VA_ARGS__>)
#define STRATA_STENCIL_TEST_CELLS(M, ...) STRATA_GRID_FOR(M, strata::test::CellValues<__VA_ARGS__>)
#define STRATA_STENCIL_TEST_KERNELS(M, T)                                           \
  STRATA_STENCIL_TEST_LAUNCH(M, strata::kernels::stencil::HeatStep<T>)              \
  STRATA_STENCIL_TEST_LAUNCH(M, strata::kernels::stencil::ShallowWaterStage<T>)     \
  STRATA_STENCIL_TEST_LAUNCH(M, strata::kernels::stencil::NormalVelocityWall<T>)    \
  STRATA_STENCIL_TEST_LAUNCH(M, strata::kernels::stencil::VorticityAtCentres<T>)    \
  STRATA_STENCIL_TEST_LAUNCH(M, strata::kernels::stencil::euler2d::Flux<T, 0>)      \
  STRATA_STENCIL_TEST_LAUNCH(M, strata::kernels::stencil::euler2d::Flux<T, 1>)      \
  STRATA_STENCIL_TEST_LAUNCH(M, strata::kernels::stencil::euler2d::ApplyTendency<T>) \
  STRATA_STENCIL_TEST_LAUNCH(M, strata::kernels::stencil::euler2d::WallHaloZ<T>)    \
  STRATA_STENCIL_TEST_LAUNCH(M, strata::kernels::stencil::euler2d::InjectJet<T>)    \
  STRATA_STENCIL_TEST_CELLS(M, strata::kernels::stencil::EnergyOf<T>)               \
  STRATA_STENCIL_TEST_CELLS(M, strata::kernels::stencil::EnstrophyOf<T>)            \
  STRATA_STENCIL_TEST_CELLS(M, strata::kernels::stencil::CourantOf<T>)              \
  STRATA_STENCIL_TEST_CELLS(M, strata::kernels::stencil::euler2d::CellMass<T>)      \
  STRATA_STENCIL_TEST_CELLS(M, strata::kernels::stencil::euler2d::CellEnergy<T>)    \
  STRATA_STENCIL_TEST_CELLS(M, strata::kernels::stencil::euler2d::CellCourant<T>)   \
  STRATA_ONCE(T, STRATA_GRID_FOR(M, strata::test::CountCalls))                     \
  STRATA_ONCE(T, STRATA_GRID_LIST_FOR(M, strata::test::CountListCalls))
STRATA_DECLARE_KERNELS(STRATA_STENCIL_TEST_KERNELS)
