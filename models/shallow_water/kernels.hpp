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
// (shallow_water_cuda.cu) a thread takes kColumns neighbouring columns up
// a run of up to kMostRows rows (ShallowWaterStage::columns): each row's
// corners, centres and faces computed once for the thread's cells and
// carried to the row above; the threads in the box launch's shape over
// the box's groups of kColumns columns (BoxLaunchShape). On the host the
// box launch's rows (BoxKernel::host_for: a vectorised loop along x, each
// cell its own values, the same bits). operator()(idx) is the plain
// reference (a cell from its linear index).
template <class T>
struct ShallowWaterColumns {
  kernels::stencil::ShallowWaterStage<T> stage;
  kernels::grid::Box box;

  // Columns a thread: fp64 2 (a row of its two cells takes 3 divisions,
  // not 4), fp32 3 (4, not 6).
  static constexpr int kColumns = sizeof(T) == 8 ? 2 : 3;
  // CUDA blocks of 128 threads (scripts/gpu/kernel-resources knows the
  // size), fp64 3 an SM (158 registers, 18.75% of an SM's threads; at 128
  // registers it would spill), fp32 6 (80 registers, 37.5%; at 64 it
  // would spill).
  static constexpr int kBlockThreads = 128;
  static constexpr int kMinBlocks = sizeof(T) == 8 ? 3 : 6;
  // A thread takes up to 16 rows while the launch keeps 2^19 threads
  // (about twice the 270,336 an H200 holds): the row below its first,
  // which it computes to carry in, then weighs a sixteenth.
  static constexpr int kMostRows = 16;
  static constexpr std::int64_t kLeastThreads = std::int64_t{1} << 19;

  // The launch over the box's groups of kColumns columns.
  kernels::grid::BoxLaunchShape shape() const {
    kernels::grid::Box groups = box;
    groups.n[0] = (box.n[0] + kColumns - 1) / kColumns;
    return kernels::grid::BoxLaunchShape(groups, kernels::grid::box_rows_per_thread(groups, kMostRows, kLeastThreads),
                                         kBlockThreads);
  }

  // The FP instructions of a thread in nvcc 13's PTX for sm_90
  // (columns<K>, inviscid, no cell at a wrapped end; a division counted as
  // OpCost<T>::div, the int-to-float conversions of the Coriolis rows and
  // the tests of nu left out): a row's K + 1 corners' q / 4 (a division
  // each) and kRowSlots other FP instructions for its K cells; the row
  // below a run's first, K + 1 divisions and kFirstRowSlots others. K = 2:
  // 126 and 58, 81 FP64 slots a cell, where a thread of one column had
  // 101; K = 3: 178 and 79 (fp32's hold the Coriolis rows' FP64 FMAs).
  static constexpr double kRowSlots = kColumns == 2 ? 126 : 178, kFirstRowSlots = kColumns == 2 ? 58 : 79;
  // Declared integer work, as every stencil declares it: the box launch's
  // index work, and the tests of a wrapped axis' ends (11 a cell in the
  // one-column thread's PTX). The kernel's own addressing is not declared
  // (no cell functor declares it): in this PTX 145 integer instructions a
  // row of two cells with one row stride for the nine views (72.5 a cell,
  // below its 81 FP64 slots), where the one-column thread had about 98 a
  // cell (docs/gpu.md, "Each family on a GPU").
  static constexpr double kWrapIntOps = 11;

  // h, u, v of the stage input (their neighbours from cache) and of s0
  // read, h, u, v written; the arithmetic and the integer work of a cell
  // at the launch's rows a thread. The first stage's s0 is its input: a
  // cell's s0 values are the ones its own stencil has just read, so they
  // come from cache, as bytes_per_cell_update() counts them.
  kernels::Work work(std::int64_t n) const {
    using kernels::OpCost;
    const kernels::grid::BoxLaunchShape shape = this->shape();
    const double rows = shape.rows;
    const double divisions = kColumns + 1;
    const double row = divisions * OpCost<T>::div + kRowSlots, first = divisions * OpCost<T>::div + kFirstRowSlots;
    const double slots = (row + first / rows) / kColumns;
    const double wrap_ops = stage.wrap[0] > 0 || stage.wrap[1] > 0 ? kWrapIntOps : 0;
    const double int_ops = shape.int_ops_per_cell() / kColumns + wrap_ops;
    const double values = stage.h0.origin == stage.rhs.h.origin ? 6 : 9;
    return kernels::item_work<T>(values, slots, int_ops) * static_cast<double>(n);
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
