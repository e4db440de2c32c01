// SweepStage::cuda_for: one Runge-Kutta stage of a sweep, each face's
// fluxes computed once and kept in registers (models/euler2d/kernels.hpp).
//  - x sweep: a warp takes 31 cells of a row; lane l computes the fluxes
//    through the low face of cell l (32 faces: lane 31's is the high face
//    of cell 30) and takes its high face's from lane l + 1 by a shuffle.
//  - z sweep: a thread takes 16 cells of a column, computing the face
//    below the first and then the one above each, which is the next
//    cell's face below.
// A warp's threads read neighbouring cells of a row in either case.
#include <cuda_runtime.h>

#include <algorithm>

#include "engine/backend/cuda_runtime.hpp"
#include "models/euler2d/kernels.hpp"

namespace strata::euler2d {

namespace {

using kernels::grid::Box;
using kernels::grid::index_t;

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kColumnThreads = 256;

// blockIdx.y: the row (looped past 65535 rows); blockIdx.x * 8 + warp:
// the row's tile of 31 cells.
template <class T, int Cells>
__global__ void __launch_bounds__(kWarp * kWarpsPerBlock) sweep_x(const SweepStage<T, 0> sweep, int tiles) {
  const k::FusedStage<T, 0>& s = sweep.stage;
  const Box& box = sweep.box;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const int tile = static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x) / kWarp;
  if (tile >= tiles) return;   // the whole warp
  const int n0 = static_cast<int>(box.n[0]), n1 = static_cast<int>(box.n[1]);
  const int first = tile * Cells;
  const int x = first + lane;                     // this lane's face: the low face of cell x
  const bool face = x <= n0;                      // faces 0 .. n0 of the box's cells
  const bool cell = lane < Cells && x < n0;
  const index_t i = box.lo[0] + x;
  // Where the sweep reads across the seam, faces 0 and 1 and n0 - 1 and n0
  // read beyond an end: lanes of a row's first and last warps, which take
  // the face's four columns apart (SweepStage::column); the rest read
  // i - 2 .. i + 1 (one address and its offsets).
  const bool across = sweep.seam > 0 && (x < 2 || x + 1 >= n0);
  for (int row = static_cast<int>(blockIdx.y); row < n1; row += static_cast<int>(gridDim.y)) {
    const index_t j = box.lo[1] + row;
    T lo[k::kVars] = {}, hi[k::kVars];
    if (face && across) {
      s.flux.face_columns(sweep.column(x - 2), sweep.column(x - 1), sweep.column(x), sweep.column(x + 1), j, lo);
    } else if (face) {
      s.flux.face(i, j, lo);
    }
    for (int v = 0; v < k::kVars; ++v) hi[v] = __shfl_down_sync(0xffffffffu, lo[v], 1);
    if (cell) s.apply.update(i, j, lo, hi);
  }
}

template <class T, int Cells>
__global__ void __launch_bounds__(kColumnThreads) sweep_z(const k::FusedStage<T, 1> s, Box box) {
  const index_t x = static_cast<index_t>(blockIdx.x) * kColumnThreads + threadIdx.x;
  if (x >= box.n[0]) return;
  const index_t i = box.lo[0] + x;
  // blockIdx.y: the column's tile of Cells rows (looped past 65535 tiles).
  for (index_t first = static_cast<index_t>(blockIdx.y) * Cells; first < box.n[1];
       first += static_cast<index_t>(gridDim.y) * Cells) {
    const index_t last = std::min<index_t>(first + Cells, box.n[1]);
    T lo[k::kVars], hi[k::kVars];
    s.flux.face(i, box.lo[1] + first, lo);
    for (index_t row = first; row < last; ++row) {
      const index_t j = box.lo[1] + row;
      s.flux.face(i, j + 1, hi);
      s.apply.update(i, j, lo, hi);
      for (int v = 0; v < k::kVars; ++v) lo[v] = hi[v];
    }
  }
}

}  // namespace

template <class T, int Axis>
void SweepStage<T, Axis>::cuda_for(std::int64_t n, void* stream) const {
  if (n <= 0 || box.size() <= 0) return;
  const auto st = static_cast<cudaStream_t>(stream);
  if constexpr (Axis == 0) {
    static_assert(kWarpCells == kWarp - 1);
    const std::int64_t tiles = (box.n[0] + kWarpCells - 1) / kWarpCells;
    const dim3 grid(static_cast<unsigned>((tiles + kWarpsPerBlock - 1) / kWarpsPerBlock),
                    static_cast<unsigned>(std::min<std::int64_t>(box.n[1], 65535)));
    sweep_x<T, kWarpCells><<<grid, kWarp * kWarpsPerBlock, 0, st>>>(*this, static_cast<int>(tiles));
    cuda::check_launch("euler2d sweep_x");
  } else {
    const std::int64_t column_tiles = (box.n[1] + kColumnCells - 1) / kColumnCells;
    const dim3 grid(static_cast<unsigned>((box.n[0] + kColumnThreads - 1) / kColumnThreads),
                    static_cast<unsigned>(std::min<std::int64_t>(column_tiles, 65535)));
    sweep_z<T, kColumnCells><<<grid, kColumnThreads, 0, st>>>(stage, box);
    cuda::check_launch("euler2d sweep_z");
  }
}

template void SweepStage<float, 0>::cuda_for(std::int64_t, void*) const;
template void SweepStage<float, 1>::cuda_for(std::int64_t, void*) const;
template void SweepStage<double, 0>::cuda_for(std::int64_t, void*) const;
template void SweepStage<double, 1>::cuda_for(std::int64_t, void*) const;

}  // namespace strata::euler2d
