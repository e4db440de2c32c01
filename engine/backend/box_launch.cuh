// The CUDA block and grid of a box launch (kernels/grid/box_kernels.hpp:
// BoxLaunchShape), for the engine's box launch and for the kernels that
// take the same shape with a launch of their own (diffusion's periodic
// step, shallow water's stage). CUDA compilations only.
#pragma once

#include <cuda_runtime.h>

#include "kernels/grid/box_kernels.hpp"

namespace strata::cuda {

inline dim3 launch_block(const kernels::grid::BoxLaunchShape& shape) {
  return dim3(static_cast<unsigned>(shape.block[0]), static_cast<unsigned>(shape.block[1]), 1);
}

inline dim3 launch_grid(const kernels::grid::BoxLaunchShape& shape) {
  return dim3(static_cast<unsigned>(shape.grid[0]), static_cast<unsigned>(shape.grid[1]),
              static_cast<unsigned>(shape.grid[2]));
}

}  // namespace strata::cuda
