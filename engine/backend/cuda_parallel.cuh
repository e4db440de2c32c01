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

#include "engine/backend/cuda_runtime.hpp"
#include "engine/backend/parallel.hpp"

namespace strata::cuda {

template <class F>
__global__ void grid_stride_kernel(std::int64_t n, F f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    f(i);
  }
}

// Launch shape from the device: enough resident blocks to fill every SM, no
// more (the grid-stride loop covers the rest). A kernel with its own launch
// (`cuda_for`, defined in its *.cu: shared-memory tiles) takes it instead.
template <class F>
void parallel_for(std::int64_t n, const F& f, void* stream) {
  if constexpr (HasStreamCudaFor<F>) {
    f.cuda_for(n, stream);
  } else if constexpr (HasCudaFor<F>) {
    f.cuda_for(n);
  } else {
    if (n <= 0) return;
    constexpr int kThreads = 256;
    static thread_local int sms = -1, per_sm = 0;
    if (sms < 0) {
      int dev = 0;
      cudaGetDevice(&dev);
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_stride_kernel<F>, kThreads, 0);
      per_sm = std::max(per_sm, 1);
    }
    const std::int64_t needed = (n + kThreads - 1) / kThreads;
    const int blocks = static_cast<int>(std::min<std::int64_t>(needed, static_cast<std::int64_t>(sms) * per_sm));
    grid_stride_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(n, f);
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
