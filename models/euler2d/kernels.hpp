// The euler2d model's kernel list (engine/backend/parallel.hpp): every
// functor it launches through for_box, global_sum or global_max, and its
// fused Runge-Kutta stage (SweepStage) with its own launches.
#pragma once

#include <cstdint>

#include "engine/grid/grid_instantiate.hpp"
#include "kernels/stencil/euler2d.hpp"

namespace strata::euler2d {

namespace k = kernels::stencil::euler2d;

// One Runge-Kutta stage of a sweep along Axis over the cells of `box`
// (FusedStage), each face's fluxes computed once: on the host each row
// (x sweep) or each chunk of columns (z sweep) carries the last face's
// fluxes to the next cell; on CUDA (euler2d_cuda.cu) a warp takes 31 cells
// of a row from the 32 faces its lanes compute (shuffled to the
// neighbouring lane), or a thread 16 cells of a column, carrying the face
// down. operator()(idx) is the plain reference (FusedStage per cell).
template <class T, int Axis>
struct SweepStage {
  k::FusedStage<T, Axis> stage;
  kernels::grid::Box box;

  // A CUDA x-sweep warp computes 32 faces for 31 cells, a z-sweep thread
  // 17 for 16.
  static constexpr int kWarpCells = 31;
  static constexpr int kColumnCells = 16;

  // Launched over box.size() cells: the forcing state read once (its
  // neighbours from cache), the initial state read, the output written
  // (with gravity_waves' forcing, one more value); the faces' fluxes (a
  // share more than one a cell) and the update (kernels/stencil/euler2d.hpp).
  kernels::Work work(std::int64_t n) const {
    using kernels::OpCost;
    const double faces = Axis == 0 ? 32.0 / kWarpCells : (kColumnCells + 1.0) / kColumnCells;
    const double values = 12 + (stage.apply.wforce.origin != nullptr ? 1 : 0);
    const double face_slots = 19 * OpCost<T>::div + OpCost<T>::pow + 40;
    const double update_slots = 4 * OpCost<T>::div + 12;
    // The thread's cell from block and thread indices, the loops, and on
    // the x sweep the shuffles of four fluxes (two each in fp64).
    const double index_ops = 12 + (Axis == 0 ? 4.0 * sizeof(T) / 4 : 0);
    return kernels::item_work<T>(values, faces * face_slots + update_slots, index_ops) * static_cast<double>(n);
  }

  STRATA_HD void operator()(kernels::grid::index_t idx) const {
    const kernels::grid::IntVect p = kernels::grid::decode(box, idx);
    stage(p[0], p[1], p[2]);
  }

  void host_for(std::int64_t) const {
    using kernels::grid::index_t;
    const index_t lo0 = box.lo[0], n0 = box.n[0], lo1 = box.lo[1], n1 = box.n[1];
    if (n0 <= 0 || n1 <= 0) return;
    if constexpr (Axis == 0) {
#pragma omp parallel for schedule(static)
      for (index_t j = lo1; j < lo1 + n1; ++j) {
        T lo[k::kVars], hi[k::kVars];
        stage.flux.face(lo0, j, lo);
        for (index_t i = lo0; i < lo0 + n0; ++i) {
          stage.flux.face(i + 1, j, hi);
          stage.apply.update(i, j, lo, hi);
          for (int v = 0; v < k::kVars; ++v) lo[v] = hi[v];
        }
      }
    } else {
      // Chunks of columns, each down all the rows: a face row computed
      // once, the forcing's rows read from cache by the next face row.
      constexpr index_t kChunk = 64;
      const index_t chunks = (n0 + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
      for (index_t c = 0; c < chunks; ++c) {
        const index_t first = lo0 + c * kChunk, width = n0 - c * kChunk < kChunk ? n0 - c * kChunk : kChunk;
        T below[k::kVars][kChunk], above[k::kVars][kChunk];
        for (index_t x = 0; x < width; ++x) {
          T f[k::kVars];
          stage.flux.face(first + x, lo1, f);
          for (int v = 0; v < k::kVars; ++v) below[v][x] = f[v];
        }
        for (index_t j = lo1; j < lo1 + n1; ++j) {
          for (index_t x = 0; x < width; ++x) {
            T lo[k::kVars], hi[k::kVars];
            stage.flux.face(first + x, j + 1, hi);
            for (int v = 0; v < k::kVars; ++v) {
              lo[v] = below[v][x];
              above[v][x] = hi[v];
            }
            stage.apply.update(first + x, j, lo, hi);
          }
          for (int v = 0; v < k::kVars; ++v)
            for (index_t x = 0; x < width; ++x) below[v][x] = above[v][x];
        }
      }
    }
  }

  void cuda_for(std::int64_t n, void* stream) const;   // euler2d_cuda.cu
};

}  // namespace strata::euler2d

#define STRATA_EULER2D_KERNELS(M, Real)                                      \
  STRATA_FOR(M, strata::euler2d::SweepStage<Real, 0>)                        \
  STRATA_FOR(M, strata::euler2d::SweepStage<Real, 1>)                        \
  STRATA_GRID_LIST_FOR(M, strata::kernels::stencil::euler2d::WallRowsZ<Real>) \
  STRATA_GRID_FOR(M, strata::kernels::stencil::euler2d::InjectJet<Real>)     \
  STRATA_GRID_SUM(M, strata::kernels::stencil::euler2d::CellMass<Real>)      \
  STRATA_GRID_SUM(M, strata::kernels::stencil::euler2d::CellEnergy<Real>)    \
  STRATA_GRID_MAX(M, strata::kernels::stencil::euler2d::CellCourant<Real>)
STRATA_DECLARE_KERNELS(STRATA_EULER2D_KERNELS)
