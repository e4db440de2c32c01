// parallel_for and parallel_reduce over [0, n) with a STRATA_HD functor, on
// the backend of a Device: an OpenMP loop on the host, a grid-stride kernel
// and a Thrust reduction on CUDA (cuda_parallel.cuh). Model code calls only
// these two, and never asks which backend it is on. Every functor launched
// is declared once, in its model's kernel list (models/<name>/kernels.hpp,
// the macros at the end; docs/gpu.md): the host build checks the list, and
// a CUDA build compiles its instantiations from it.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "build_config.hpp"
#include "engine/backend/backend.hpp"
#include "engine/backend/shape_counts.hpp"
#include "engine/runtime/error.hpp"
#include "kernels/core/hd.hpp"

namespace strata {

namespace cuda {   // cuda_parallel.cuh; stream: a cudaStream_t, null for the default stream
template <class F>
void parallel_for(std::int64_t n, const F& f, void* stream);
template <class T, class F, class Op>
T parallel_reduce(std::int64_t n, const F& f, T init, Op op, void* stream);
}  // namespace cuda

// Set by a kernel list (STRATA_FOR / STRATA_REDUCE) for each functor it declares.
template <class F>
struct declared_for : std::false_type {};
template <class T, class F, class Op>
struct declared_reduce : std::false_type {};

namespace host {

// Waking the OpenMP team costs more than a few thousand iterations of a
// light kernel (a kick: a few multiply-adds), so such a loop runs on the
// calling thread; a kernel says so with `static constexpr bool
// kLightIterations = true`. A heavy one (a row of cells, a batch of paths)
// keeps the team for any n > 1. Iterations are independent: no result changes.
template <class F>
constexpr std::int64_t serial_below() {
  if constexpr (requires { F::kLightIterations; }) return F::kLightIterations ? 4096 : 2;
  return 2;
}

template <class F>
void parallel_for(std::int64_t n, const F& f) {
#pragma omp parallel for schedule(static) if (n >= serial_below<F>())
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
  // One piece is one thread's work whatever the team: no team for it.
#pragma omp parallel for schedule(static) if (pieces > 1)
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
// `void cuda_for(std::int64_t n, void* stream) const`, defined in a *.cu
// file, replaces the grid-stride kernel (shared-memory tiles; cuda_for(n)
// launches on the default stream).
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
concept HasStreamCudaFor = requires(const F& f, std::int64_t n, void* stream) { f.cuda_for(n, stream); };

// The device work a functor declares for a launch over [0, n) (`shape::Work
// work(std::int64_t n) const`: bytes of device memory, arithmetic
// operations), for the shape counts and the cost model; none if it declares none.
template <class F>
shape::Work work_of(const F& f, std::int64_t n) {
  if constexpr (requires { { f.work(n) } -> std::same_as<shape::Work>; }) {
    return f.work(n);
  } else {
    return {};
  }
}

// The threads a launch over [0, n) runs on a GPU: n, or what the functor's
// own launch shape says (`std::int64_t launch_threads(std::int64_t n)
// const`: a box launch's thread takes several cells).
template <class F>
std::int64_t threads_of(const F& f, std::int64_t n) {
  if constexpr (requires { { f.launch_threads(n) } -> std::convertible_to<std::int64_t>; }) {
    return f.launch_threads(n);
  } else {
    return n;
  }
}

// CUB's reduction does one tile (256 threads x 16 items) in a single
// launch, more in two: what shape::launch is told a reduction costs.
inline constexpr std::int64_t kReduceTile = 4096;

#define STRATA_UNDECLARED_KERNEL                                                                            \
  "no kernel list declares this functor: add STRATA_FOR(M, <functor>) (STRATA_REDUCE(M, <result>, <op>, " \
  "<functor>), STRATA_GRID_FOR/_SUM/_MAX) to models/<name>/kernels.hpp and include it here (docs/gpu.md)"

// On `stream` (Stream{}: the default one); the host ignores it.
template <class F>
void parallel_for(const Device& device, std::int64_t n, const F& f, const Stream& stream = {}) {
  static_assert(declared_for<F>::value, STRATA_UNDECLARED_KERNEL);
  if (n > 0) shape::launch(threads_of(f, n), work_of(f, n), shape::kernel_name<F>());
  if (device.on_cuda()) {
    if constexpr (build::kHaveCuda) {
      cuda::parallel_for(n, f, stream.handle());   // f.cuda_for where F has one
    } else {
      detail::no_cuda_backend();
    }
  } else if constexpr (HasHostFor<F>) {
    f.host_for(n);
  } else {
    host::parallel_for(n, f);
  }
}

template <class T, class F, class Op>
T parallel_reduce(const Device& device, std::int64_t n, const F& f, T init, Op op, const Stream& stream = {}) {
  static_assert(declared_reduce<T, F, Op>::value, STRATA_UNDECLARED_KERNEL);
  if (n > 0) {
    shape::launch(n, work_of(f, n), shape::kernel_name<F>());
    if (n > kReduceTile) shape::launch(256);
    shape::wait();   // the result, read back on the host
    shape::to_host(sizeof(T));
  }
  if (device.on_cuda()) {
    if constexpr (build::kHaveCuda) {
      return cuda::parallel_reduce(n, f, init, op, stream.handle());
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

// --- kernel lists: #define STRATA_<MODEL>_KERNELS(M, Real) of entries ---------
// M is `declare` (the traits above, every build) or `instantiate` (CUDA,
// cuda_parallel.cuh); STRATA_ONCE holds entries that do not depend on Real.
#define STRATA_FOR(M, ...) STRATA_FOR_##M(__VA_ARGS__)
#define STRATA_REDUCE(M, T, Op, ...) STRATA_REDUCE_##M(T, Op, __VA_ARGS__)
#define STRATA_FOR_declare(...) template <> struct strata::declared_for<__VA_ARGS__> : std::true_type {};
#define STRATA_REDUCE_declare(T, Op, ...) \
  template <> struct strata::declared_reduce<T, __VA_ARGS__, Op> : std::true_type {};
#define STRATA_ONCE(Real, ...) STRATA_ONCE_##Real(__VA_ARGS__)
#define STRATA_ONCE_double(...) __VA_ARGS__
#define STRATA_ONCE_float(...)
#define STRATA_DECLARE_KERNELS(LIST) LIST(declare, double) LIST(declare, float)   // at global scope
