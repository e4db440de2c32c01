// parallel_for and parallel_reduce over [0, n) with a STRATA_HD functor, on
// the backend of a Device. The host implementation is an OpenMP loop; the
// CUDA one (cuda_parallel.cuh) is a grid-stride kernel and a CUB reduction,
// instantiated per functor in a model's *.cu file with
// STRATA_CUDA_INSTANTIATE_FOR / _REDUCE. Model code calls only these two,
// and never asks which backend it is on.
#pragma once

#include <concepts>
#include <cstdint>
#include <vector>

#include "build_config.hpp"
#include "engine/backend/backend.hpp"
#include "engine/runtime/error.hpp"
#include "kernels/core/hd.hpp"

namespace strata {

namespace cuda {
template <class F>
void parallel_for(std::int64_t n, const F& f);
template <class T, class F, class Op>
T parallel_reduce(std::int64_t n, const F& f, T init, Op op);
}  // namespace cuda

namespace host {

template <class F>
void parallel_for(std::int64_t n, const F& f) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) f(i);
}

// Deterministic for any thread count: [0, n) is cut into fixed-size pieces,
// each reduced in index order, and the piece results combined in order.
inline constexpr std::int64_t kReducePiece = 4096;

template <class T, class F, class Op>
T parallel_reduce(std::int64_t n, const F& f, T init, Op op) {
  if (n <= 0) return init;
  const std::int64_t pieces = (n + kReducePiece - 1) / kReducePiece;
  std::vector<T> partial(static_cast<std::size_t>(pieces));
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::int64_t begin = p * kReducePiece;
    const std::int64_t end = begin + kReducePiece < n ? begin + kReducePiece : n;
    T acc = f(begin);
    for (std::int64_t i = begin + 1; i < end; ++i) acc = op(acc, f(i));
    partial[static_cast<std::size_t>(p)] = acc;
  }
  T result = init;
  for (const T& v : partial) result = op(result, v);
  return result;
}

}  // namespace host

namespace detail {
[[noreturn]] void no_cuda_backend();
}

// A kernel may carry its own launch for one backend, chosen here and
// nowhere else: `void host_for(std::int64_t n) const` runs all of [0, n) on
// the host (a vectorised batch loop, a serial loop for tiny n), and
// `void cuda_for(std::int64_t n) const`, defined in a *.cu file, replaces
// the grid-stride kernel (shared-memory tiles). Models never branch on the
// backend themselves.
template <class F>
concept HasHostFor = requires(const F& f, std::int64_t n) { f.host_for(n); };
template <class F>
concept HasCudaFor = requires(const F& f, std::int64_t n) { f.cuda_for(n); };

// Likewise a kernel of a reduction may reduce itself on the host: `T
// host_reduce(std::int64_t n, T init, Op op) const` (a box by rows, no
// index division per cell), for exact operators only (max, Fixed128 sums),
// where any order gives the bits of the linear reduction.
template <class F, class T, class Op>
concept HasHostReduce = requires(const F& f, std::int64_t n, T init, Op op) {
  { f.host_reduce(n, init, op) } -> std::same_as<T>;
};

template <class F>
void parallel_for(const Device& device, std::int64_t n, const F& f) {
  if (device.backend == Backend::cuda) {
    if constexpr (!build::kHaveCuda) {
      detail::no_cuda_backend();
    } else if constexpr (HasCudaFor<F>) {
      f.cuda_for(n);
    } else {
      cuda::parallel_for(n, f);
    }
  } else if constexpr (HasHostFor<F>) {
    f.host_for(n);
  } else {
    host::parallel_for(n, f);
  }
}

template <class T, class F, class Op>
T parallel_reduce(const Device& device, std::int64_t n, const F& f, T init, Op op) {
  if (device.backend == Backend::cuda) {
    if constexpr (build::kHaveCuda) {
      return cuda::parallel_reduce(n, f, init, op);
    } else {
      detail::no_cuda_backend();
    }
  }
  if constexpr (HasHostReduce<F, T, Op>) {
    return f.host_reduce(n, init, op);
  } else {
    return host::parallel_reduce(n, f, init, op);
  }
}

// Associative operators usable on both backends.
struct Plus {
  template <class T>
  STRATA_HD T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

}  // namespace strata
