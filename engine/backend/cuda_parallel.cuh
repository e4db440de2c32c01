// CUDA implementations of strata::cuda::parallel_for / parallel_reduce.
// Include only from *.cu files, then instantiate each functor used:
//   STRATA_CUDA_INSTANTIATE_FOR(MyFunctor<double>)
//   STRATA_CUDA_INSTANTIATE_REDUCE(double, MyFunctor<double>, strata::Plus)
#pragma once

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
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
// more (the grid-stride loop covers the rest).
template <class F>
void parallel_for(std::int64_t n, const F& f) {
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
  grid_stride_kernel<<<blocks, kThreads>>>(n, f);
  check_launch("parallel_for");
}

template <class T, class F, class Op>
T parallel_reduce(std::int64_t n, const F& f, T init, Op op) {
  T r = thrust::transform_reduce(thrust::device, thrust::counting_iterator<std::int64_t>(0),
                                 thrust::counting_iterator<std::int64_t>(n), f, init, op);
  check_launch("parallel_reduce");
  return r;
}

}  // namespace strata::cuda

#define STRATA_CUDA_INSTANTIATE_FOR(...) \
  template void strata::cuda::parallel_for<__VA_ARGS__>(std::int64_t, const __VA_ARGS__&);
#define STRATA_CUDA_INSTANTIATE_REDUCE(T, F, Op) \
  template T strata::cuda::parallel_reduce<T, F, Op>(std::int64_t, const F&, T, Op);
