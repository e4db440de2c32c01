// ShallowWaterColumns::cuda_for: one SSP-RK3 stage in the box launch's
// shape (kernels/grid/box_kernels.hpp: BoxLaunchShape), a thread walking
// up to ShallowWaterColumns::kMostRows consecutive rows of one column and carrying from
// each row to the next the values the two share
// (ShallowWaterStage::column). A warp's threads take neighbouring cells of
// a row.
#include <cuda_runtime.h>

#include <algorithm>

#include "engine/backend/box_launch.cuh"
#include "engine/backend/cuda_runtime.hpp"
#include "models/shallow_water/kernels.hpp"

namespace strata::shallow_water {

namespace {

using kernels::grid::Box;
using kernels::grid::index_t;

constexpr int kThreads = 256;
template <class T>
constexpr int kMinBlocks = sizeof(T) == 8 ? 2 : 4;

// x from the block's threads and blocks along x, y from the grid's y (and
// the block's y for short rows), `rows` rows a thread (looped past 65,535
// blocks in y). A shallow-water box has one plane.
template <class T>
__global__ void __launch_bounds__(kThreads, kMinBlocks<T>) stage_columns(const kernels::stencil::ShallowWaterStage<T> s, Box box,
                                                          int rows) {
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= box.n[0]) return;
  const index_t i = box.lo[0] + x;
  const std::int64_t first = (static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y) * rows;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.y) * blockDim.y * rows;
  for (std::int64_t j0 = first; j0 < box.n[1]; j0 += stride) {
    const std::int64_t j1 = std::min<std::int64_t>(j0 + rows, box.n[1]);
    s.column(i, box.lo[1] + j0, box.lo[1] + j1);
  }
}

}  // namespace

template <class T>
void ShallowWaterColumns<T>::cuda_for(std::int64_t n, void* stream) const {
  if (n <= 0 || box.size() <= 0) return;
  const kernels::grid::BoxLaunchShape shape = this->shape();
  stage_columns<T><<<cuda::launch_grid(shape), cuda::launch_block(shape), 0, static_cast<cudaStream_t>(stream)>>>(
      stage, box, shape.rows);
  cuda::check_launch("shallow_water stage_columns");
}

template void ShallowWaterColumns<float>::cuda_for(std::int64_t, void*) const;
template void ShallowWaterColumns<double>::cuda_for(std::int64_t, void*) const;

}  // namespace strata::shallow_water
