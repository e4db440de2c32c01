// The shallow_water model's kernel list (engine/backend/parallel.hpp):
// every functor it launches through for_box, for_boxes, global_sum or
// global_max, and its Runge-Kutta stage (ShallowWaterColumns) with its own
// CUDA launch.
#pragma once

#include <cstdint>

#include "engine/grid/grid_instantiate.hpp"
#include "kernels/grid/box_kernels.hpp"
#include "kernels/stencil/shallow_water.hpp"

namespace strata::shallow_water {

// One SSP-RK3 stage (kernels/stencil/shallow_water.hpp: ShallowWaterStage)
// over the cells of `box`, launched over box.size() cells. On CUDA
// (shallow_water_cuda.cu) in the box launch's shape (BoxLaunchShape: a
// thread up to kMostRows consecutive rows of one column), a thread
// carrying from each row to the next the values the two share
// (ShallowWaterStage::column): the corner's q / 4, B, two U and two V. On
// the host the box launch's rows (BoxKernel::host_for: a vectorised loop
// along x, each cell its own values, the same bits). operator()(idx) is
// the plain reference (a cell from its linear index).
template <class T>
struct ShallowWaterColumns {
  kernels::stencil::ShallowWaterStage<T> stage;
  kernels::grid::Box box;

  // The FP instructions of a thread in nvcc 13's PTX for sm_90 (column(),
  // inviscid; a division counted as OpCost<T>::div, the int-to-float
  // conversions of the Coriolis rows and the test of nu left out): each
  // row two corners' q / 4 (a division each) and 74 others, against the
  // cell launch's 3 and 97; its thread's first row also the q / 4 it
  // cannot carry (a division) and 29 others (that corner's q, the B, two U
  // and two V below and beside it). The same counts in fp64 and fp32
  // (fp32's hold the Coriolis rows' FP64 FMAs: 4 a row, 2 more the first).
  static constexpr double kRowSlots = 74, kFirstRowSlots = 29;
  // The integer instructions a row that writing a wrapped axis' halo
  // images adds (its cell's tests of the axes' ends, in the same PTX: 95
  // against 84 a row); the stores of the few cells at an end left out.
  static constexpr double kWrapRowIntOps = 11;
  // A thread takes up to 16 rows (the box launch's 8 while the launch
  // keeps its 2^20 threads): its first row, which carries nothing in (a
  // division and 29 other slots), then weighs 2.6 slots a cell, not 5.1.
  static constexpr int kMostRows = 16;
  kernels::grid::BoxLaunchShape shape() const {
    return kernels::grid::BoxLaunchShape(box, kernels::grid::box_rows_per_thread(box, kMostRows));
  }

  // h, u, v of the stage input (their neighbours from cache) and of s0
  // read, h, u, v written; the arithmetic of a cell at the launch's rows a
  // thread, and the box launch's index work. The first stage's s0 is its
  // input: a cell's s0 values are the ones its own stencil has just read,
  // so they come from cache, as bytes_per_cell_update() counts them.
  kernels::Work work(std::int64_t n) const {
    using kernels::OpCost;
    const kernels::grid::BoxLaunchShape shape = this->shape();
    const double rows = shape.rows;
    const double slots = 2 * OpCost<T>::div + kRowSlots + (OpCost<T>::div + kFirstRowSlots) / rows;
    const double values = stage.h0.origin == stage.rhs.h.origin ? 6 : 9;
    const double wrap_ops = stage.wrap[0] > 0 || stage.wrap[1] > 0 ? kWrapRowIntOps : 0;
    return kernels::item_work<T>(values, slots, shape.int_ops_per_cell() + wrap_ops) * static_cast<double>(n);
  }
  // The CUDA threads of that launch (the shape counts' threads).
  std::int64_t launch_threads(std::int64_t) const { return shape().threads(); }

  STRATA_HD void operator()(kernels::grid::index_t idx) const {
    const kernels::grid::IntVect p = kernels::grid::decode(box, idx);
    stage(p[0], p[1], p[2]);
  }

  // The host: the box launch's vectorised rows, then the halo images of
  // the box's cells at the ends of a wrapped axis (ShallowWaterStage::
  // wrap_cell, which CUDA's threads write as they go: the same values).
  void host_for(std::int64_t n) const {
    kernels::grid::BoxKernel<kernels::stencil::ShallowWaterStage<T>>{box, stage}.host_for(n);
    if (stage.wrap[0] == 0 && stage.wrap[1] == 0) return;
    using kernels::grid::index_t;
    const index_t x0 = box.lo[0], x1 = box.lo[0] + box.n[0] - 1, y0 = box.lo[1], y1 = box.lo[1] + box.n[1] - 1;
    for (index_t j = y0; j <= y1; ++j) {
      stage.wrap_cell(x0, j);
      stage.wrap_cell(x1, j);
    }
    for (index_t i = x0; i <= x1; ++i) {
      stage.wrap_cell(i, y0);
      stage.wrap_cell(i, y1);
    }
  }

  void cuda_for(std::int64_t n, void* stream) const;  // shallow_water_cuda.cu
};

}  // namespace strata::shallow_water

#define STRATA_SHALLOW_WATER_KERNELS(M, Real)                                \
  STRATA_FOR(M, strata::shallow_water::ShallowWaterColumns<Real>)            \
  STRATA_GRID_FOR(M, strata::kernels::stencil::NormalVelocityWall<Real>)     \
  STRATA_GRID_LIST_FOR(M, strata::kernels::stencil::ShallowWaterWalls<Real>) \
  STRATA_GRID_FOR(M, strata::kernels::stencil::VorticityAtCentres<Real>)     \
  STRATA_GRID_SUM(M, strata::kernels::stencil::EnergyOf<Real>)               \
  STRATA_GRID_SUM(M, strata::kernels::stencil::EnstrophyOf<Real>)            \
  STRATA_GRID_MAX(M, strata::kernels::stencil::CourantOf<Real>)
STRATA_DECLARE_KERNELS(STRATA_SHALLOW_WATER_KERNELS)
