// The euler2d model's kernel list (engine/backend/parallel.hpp): every
// functor it launches through for_box, global_sum or global_max, and its
// fused Runge-Kutta stage (SweepStage) with its own launches.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

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
  // An x sweep over a periodic x that this rank spans alone (box: its owned
  // cells, seam their count) reads across the seam itself: a face's cells
  // beyond either end are the owned cells those halo columns would copy,
  // so the halos need no copy before the stage. 0: it reads its halos.
  kernels::grid::index_t seam = 0;

  // A CUDA x-sweep warp computes 32 faces for 31 cells, a z-sweep thread
  // 17 for 16.
  static constexpr int kWarpCells = 31;
  static constexpr int kColumnCells = 16;
  // The integer instructions the seam adds to a CUDA x-sweep thread's row
  // (nvcc 13's PTX for sm_90, fp64, a face that does not read across: its
  // test, and the addresses the two kinds of face keep apart): 91 against
  // 75 (a row a thread at the first run's sizes). The lanes that read
  // across, four of a row's thousands, are left out.
  static constexpr double kSeamIntOps = 16;

  // Column x of the box (x in -2 .. box.n[0], box-relative) as the x sweep
  // reads it: across the seam, the owned column that halo column copies.
  STRATA_HD STRATA_FORCEINLINE kernels::grid::index_t column(kernels::grid::index_t x) const {
    return box.lo[0] + x + (x < 0 ? seam : 0) - (seam > 0 && x >= seam ? seam : 0);
  }

  // Launched over box.size() cells: the forcing state read once (its
  // neighbours from cache), the initial state read, the output written
  // (with gravity_waves' forcing, one more value); the faces' fluxes (a
  // share more than one a cell) and the update (kernels/stencil/euler2d.hpp).
  // A sweep's first stage starts from its forcing state (init is forcing):
  // a cell's initial values are the ones its own faces have just read, so
  // they come from cache, as bytes_per_cell_update() counts them.
  kernels::Work work(std::int64_t n) const {
    using kernels::OpCost;
    const double faces = Axis == 0 ? 32.0 / kWarpCells : (kColumnCells + 1.0) / kColumnCells;
    const double state_values = stage.apply.init.origin == stage.flux.s.origin ? 8 : 12;
    const double values = state_values + (stage.apply.wforce.origin != nullptr ? 1 : 0);
    const double face_slots = OpCost<T>::div + OpCost<T>::pow + k::kFaceSlots;
    const double update_slots = OpCost<T>::div + k::kUpdateSlots;
    // The thread's cell from block and thread indices, the loops, and on
    // the x sweep the shuffles of four fluxes (two each in fp64) and,
    // reading across a seam, the choice of its four columns.
    const double index_ops = 12 + (Axis == 0 ? 4.0 * sizeof(T) / 4 + (seam > 0 ? kSeamIntOps : 0) : 0);
    return kernels::item_work<T>(values, faces * face_slots + update_slots, index_ops) * static_cast<double>(n);
  }

  STRATA_HD void operator()(kernels::grid::index_t idx) const {
    const kernels::grid::IntVect p = kernels::grid::decode(box, idx);
    stage(p[0], p[1], p[2]);
  }

  // The host: a row's face fluxes (the faces along x, or the row of faces
  // above it in z) in one vectorised loop into a buffer in cache, then the
  // row's updates from it in another; each face computed once (z: once
  // more a block of rows), no value carried from one cell to the next
  // (which kept the loops scalar: 12% to 29% slower on a 2-core EPYC). The
  // same expressions, so the same bits as FusedStage.
  void host_for(std::int64_t) const {
    using kernels::grid::index_t;
    const index_t lo0 = box.lo[0], n0 = box.n[0], lo1 = box.lo[1], n1 = box.n[1];
    if (n0 <= 0 || n1 <= 0) return;
    if constexpr (Axis == 0) {
#pragma omp parallel
      {
        const index_t faces = n0 + 1;
        std::vector<T> buffer(static_cast<std::size_t>(k::kVars * faces));
        T* const f = buffer.data();
        // Across a seam, faces 0 and 1 and n0 - 1 and n0 read beyond an
        // end (seam_faces); the rest are the vectorised loop's.
        const index_t head = seam > 0 ? std::min<index_t>(2, faces) : 0;
        const index_t tail = seam > 0 ? std::max<index_t>(head, n0 - 1) : faces;
#pragma omp for schedule(static)
        for (index_t j = lo1; j < lo1 + n1; ++j) {
          seam_faces(0, head, j, f, faces);
          face_row(lo0 + head, j, tail - head, f + head, faces);
          seam_faces(tail, faces, j, f, faces);
          update_row(lo0, j, n0, f, f + 1, faces);
        }
      }
    } else {
      // Blocks of kRowBlock rows, whole rows each, down the block: a face
      // row computed once (one more a block), the forcing's rows read from
      // cache by the next face row, memory walked in its own order.
      constexpr index_t kRowBlock = 32;
      const index_t blocks = (n1 + kRowBlock - 1) / kRowBlock;
#pragma omp parallel
      {
        std::vector<T> buffer(static_cast<std::size_t>(2 * k::kVars * n0));
        T* const rows[2] = {buffer.data(), buffer.data() + k::kVars * n0};
#pragma omp for schedule(static)
        for (index_t b = 0; b < blocks; ++b) {
          const index_t first = lo1 + b * kRowBlock, last = first + kRowBlock < lo1 + n1 ? first + kRowBlock : lo1 + n1;
          face_row(lo0, first, n0, rows[0], n0);
          for (index_t j = first; j < last; ++j) {
            const T* const below = rows[(j - first) % 2];
            T* const above = rows[(j - first + 1) % 2];
            face_row(lo0, j + 1, n0, above, n0);
            update_row(lo0, j, n0, below, above, n0);
          }
        }
      }
    }
  }

  void cuda_for(std::int64_t n, void* stream) const;   // euler2d_cuda.cu

  // The host's loops: the fluxes of faces (i0 + x, j), x < count, into
  // out[v * stride + x] (a local copy of the functor: no aliasing of its
  // pointers with the stores), and cells (i0 + x, j) from faces lo[v *
  // stride + x] and hi[v * stride + x].
  void face_row(kernels::grid::index_t i0, kernels::grid::index_t j, kernels::grid::index_t count, T* out,
                kernels::grid::index_t stride) const {
    const k::Flux<T, Axis> flux = stage.flux;
#pragma omp simd
    for (kernels::grid::index_t x = 0; x < count; ++x) {
      T f[k::kVars];
      flux.face(i0 + x, j, f);
      for (int v = 0; v < k::kVars; ++v) out[v * stride + x] = f[v];
    }
  }
  // Faces x0 <= x < x1 (box-relative) of row j read across the seam, into
  // out[v * stride + x].
  void seam_faces(kernels::grid::index_t x0, kernels::grid::index_t x1, kernels::grid::index_t j, T* out,
                  kernels::grid::index_t stride) const {
    if constexpr (Axis == 0) {
      for (kernels::grid::index_t x = x0; x < x1; ++x) {
        T f[k::kVars];
        stage.flux.face_columns(column(x - 2), column(x - 1), column(x), column(x + 1), j, f);
        for (int v = 0; v < k::kVars; ++v) out[v * stride + x] = f[v];
      }
    }
  }
  void update_row(kernels::grid::index_t i0, kernels::grid::index_t j, kernels::grid::index_t count, const T* lo_faces,
                  const T* hi_faces, kernels::grid::index_t stride) const {
    const k::ApplyTendency<T> apply = stage.apply;
#pragma omp simd
    for (kernels::grid::index_t x = 0; x < count; ++x) {
      T lo[k::kVars], hi[k::kVars];
      for (int v = 0; v < k::kVars; ++v) {
        lo[v] = lo_faces[v * stride + x];
        hi[v] = hi_faces[v * stride + x];
      }
      apply.update(i0 + x, j, lo, hi);
    }
  }
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
