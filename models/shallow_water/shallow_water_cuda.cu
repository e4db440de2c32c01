// ShallowWaterColumns::cuda_for: one SSP-RK3 stage in the box launch's
// shape over the box's groups of kColumns columns (kernels/grid/
// box_kernels.hpp: BoxLaunchShape; fp64 2, fp32 3), a thread walking its
// neighbouring columns up a run of rows, each row's shared values
// computed once and carried up (ShallowWaterStage::columns). A warp's
// threads take neighbouring groups of a row.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "engine/backend/box_launch.cuh"
#include "engine/backend/cuda_runtime.hpp"
#include "models/shallow_water/kernels.hpp"

namespace strata::shallow_water {

namespace {

using kernels::grid::Box;
using kernels::grid::index_t;

template <class T>
using Columns = ShallowWaterColumns<T>;

// x from the block's threads and blocks along x (a thread kColumns
// columns), y from the grid's y (and the block's y for short rows), `rows`
// rows a thread (looped past 65,535 blocks in y). A shallow-water box has
// one plane. The stage with one row stride for its nine fields: a cell's
// offset is computed once for all of them.
template <class T>
__global__ void __launch_bounds__(Columns<T>::kBlockThreads, Columns<T>::kMinBlocks)
    stage_columns(const kernels::stencil::ShallowWaterStage<T> stage, Box box, int rows) {
  constexpr int K = Columns<T>::kColumns;
  const kernels::stencil::ShallowWaterStage<T> s = stage.with_one_row_stride();
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (K * x >= box.n[0]) return;
  const index_t i0 = box.lo[0] + K * x, i_end = box.lo[0] + box.n[0];
  const std::int64_t first = (static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y) * rows;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.y) * blockDim.y * rows;
  for (std::int64_t j0 = first; j0 < box.n[1]; j0 += stride) {
    const std::int64_t j1 = std::min<std::int64_t>(j0 + rows, box.n[1]);
    s.template columns<K>(i0, i_end, box.lo[1] + j0, box.lo[1] + j1);
  }
}

}  // namespace

template <class T>
void ShallowWaterColumns<T>::cuda_for(std::int64_t n, void* stream) const {
  if (n <= 0 || box.size() <= 0) return;
  if (!stage.one_row_stride())
    throw std::logic_error("shallow_water stage_columns: the nine fields must have one row stride (one grid's)");
  const kernels::grid::BoxLaunchShape shape = this->shape();
  stage_columns<T><<<cuda::launch_grid(shape), cuda::launch_block(shape), 0, static_cast<cudaStream_t>(stream)>>>(
      stage, box, shape.rows);
  cuda::check_launch("shallow_water stage_columns");
}

template void ShallowWaterColumns<float>::cuda_for(std::int64_t, void*) const;
template void ShallowWaterColumns<double>::cuda_for(std::int64_t, void*) const;

}  // namespace strata::shallow_water
