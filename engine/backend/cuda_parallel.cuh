// CUDA implementations of strata::cuda::parallel_for / parallel_reduce,
// instantiated for the functors of a kernel list by the *.cu that CMake
// generates from engine/backend/kernels_cuda.cu.in (parallel.hpp).
#pragma once

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <climits>

#include "engine/backend/box_launch.cuh"
#include "engine/backend/cuda_runtime.hpp"
#include "engine/backend/parallel.hpp"
#include "kernels/grid/box_kernels.hpp"

namespace strata::cuda {

template <class F>
__global__ void grid_stride_kernel(std::int64_t n, F f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    f(i);
  }
}

// The same for a functor whose threads index arrays of its own with
// values known only at run time (`static constexpr bool kIndexedArgument`:
// a box list): a by-value argument so indexed is copied to every thread's
// stack; __grid_constant__ reads it in place, in the parameter space.
template <class F>
__global__ void grid_stride_kernel_in_place(std::int64_t n, const __grid_constant__ F f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    f(i);
  }
}

template <class F>
concept IndexedArgument = requires { requires F::kIndexedArgument; };

// A box launch (kernels/grid/box_kernels.hpp: a functor with `box`, and
// `cell(i, j, k, c)` for cell (i, j, k) and component c), shaped by
// BoxLaunchShape: x from the block's threads and blocks along x, y from
// the grid's y (and the block's y for short rows), `rows` consecutive rows
// a thread, z from the grid's z, every component in turn in the thread
// (box_thread_cells). No thread divides its index, where the grid-stride
// launch decoded (i, j, k) from a linear index with two 64-bit divisions
// per cell; a thread's index work and its functor's addresses are set up
// once for its rows.
template <class F>
concept BoxLaunch = requires(const F& f, std::int64_t i) {
  f.box;
  { F::kComponents } -> std::convertible_to<bool>;
  f.cell(i, i, i, 0);
};

template <class F>
__global__ void box_kernel(F f, int rows) {
  const std::int64_t y_threads = static_cast<std::int64_t>(gridDim.y) * blockDim.y;
  kernels::grid::box_thread_cells(f.box, rows, static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
                                  static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y, y_threads,
                                  blockIdx.z, gridDim.z, [&](std::int64_t x, std::int64_t y, std::int64_t z) {
                                    if constexpr (F::kComponents) {
                                      for (int c = 0; c < f.ncomp; ++c) f.cell(x, y, z, c);
                                    } else {
                                      f.cell(x, y, z, 0);
                                    }
                                  });
}

template <class F>
void launch_box(const F& f, cudaStream_t stream) {
  const kernels::grid::BoxLaunchShape shape(f.box);
  box_kernel<<<launch_grid(shape), launch_block(shape), 0, stream>>>(f, shape.rows);
  check_launch("parallel_for (box)");
}

// Launch shape from the device: enough resident blocks to fill every SM, no
// more (the grid-stride loop covers the rest). A kernel with its own launch
// (`cuda_for`, defined in its *.cu: shared-memory tiles) takes it instead,
// and a box launch (above) its own shape.
template <class F>
void parallel_for(std::int64_t n, const F& f, void* stream) {
  if constexpr (HasStreamCudaFor<F>) {
    f.cuda_for(n, stream);
  } else if constexpr (HasCudaFor<F>) {
    f.cuda_for(n);
  } else {
    if (n <= 0) return;
    if constexpr (BoxLaunch<F>) {
      // Every axis of the box within an int (a rank's box always is).
      if (f.box.n[0] <= INT_MAX && f.box.n[1] <= INT_MAX && f.box.n[2] <= INT_MAX) {
        launch_box(f, static_cast<cudaStream_t>(stream));
        return;
      }
    }
    constexpr int kThreads = 256;
    auto* const kernel = [] {
      if constexpr (IndexedArgument<F>) {
        return grid_stride_kernel_in_place<F>;
      } else {
        return grid_stride_kernel<F>;
      }
    }();
    static thread_local int sms = -1, per_sm = 0;
    if (sms < 0) {
      int dev = 0;
      cudaGetDevice(&dev);
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0);
      per_sm = std::max(per_sm, 1);
    }
    const std::int64_t needed = (n + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(std::min<std::int64_t>(needed, static_cast<std::int64_t>(sms) * per_sm));
    kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(n, f);
    check_launch("parallel_for");
  }
}

template <class T, class F, class Op>
T parallel_reduce(std::int64_t n, const F& f, T init, Op op, void* stream) {
  T r = thrust::transform_reduce(thrust::cuda::par.on(static_cast<cudaStream_t>(stream)),
                                 thrust::counting_iterator<std::int64_t>(0),
                                 thrust::counting_iterator<std::int64_t>(n), f, init, op);
  check_launch("parallel_reduce");
  return r;
}

}  // namespace strata::cuda

// The `instantiate` expansion of a kernel list (parallel.hpp).
#define STRATA_FOR_instantiate(...) \
  template void strata::cuda::parallel_for<__VA_ARGS__>(std::int64_t, const __VA_ARGS__&, void*);
#define STRATA_REDUCE_instantiate(T, Op, ...) \
  template T strata::cuda::parallel_reduce<T, __VA_ARGS__, Op>(std::int64_t, const __VA_ARGS__&, T, Op, void*);
#define STRATA_INSTANTIATE_KERNELS(LIST) LIST(instantiate, double) LIST(instantiate, float)
