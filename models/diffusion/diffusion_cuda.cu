// PeriodicHeatStep::cuda_for: the heat step as a box launch
// (kernels/grid/box_kernels.hpp: BoxLaunchShape, a thread's rows of y),
// each thread reading across the seams of the wrapped axes and writing the
// y halo rows it owes (kernels/stencil/diffusion.hpp).
#include <cuda_runtime.h>

#include "engine/backend/box_launch.cuh"
#include "engine/backend/cuda_runtime.hpp"
#include "kernels/stencil/diffusion.hpp"

namespace strata::kernels::stencil {

namespace {

template <class T>
__global__ void periodic_heat_step(const PeriodicHeatStep<T> s, int rows) {
  s.thread_cells(rows, static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                 static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y,
                 static_cast<std::int64_t>(gridDim.y) * blockDim.y, blockIdx.z, gridDim.z);
}

}  // namespace

template <class T>
void PeriodicHeatStep<T>::cuda_for(std::int64_t n, void* stream) const {
  if (n <= 0 || box.size() <= 0) return;
  const grid::BoxLaunchShape shape = this->shape();
  periodic_heat_step<T><<<cuda::launch_grid(shape), cuda::launch_block(shape), 0, static_cast<cudaStream_t>(stream)>>>(
      *this, shape.rows);
  cuda::check_launch("diffusion periodic_heat_step");
}

template void PeriodicHeatStep<float>::cuda_for(std::int64_t, void*) const;
template void PeriodicHeatStep<double>::cuda_for(std::int64_t, void*) const;

}  // namespace strata::kernels::stencil
