// What a launch does on the device, as its kernel declares it through
// `Work work(std::int64_t n) const` (engine/backend/parallel.hpp), for the
// shape counts and the cost model (docs/gpu.md): no kernel depends on it.
//  - bytes: device memory read and written, as the limit is counted (each
//    array streamed once; neighbours a cache serves are not counted again);
//  - flops: floating-point operations in the run's precision, an FMA 2,
//    and a transcendental, a division or a square root as the instructions
//    nvcc expands it to (kernels/core/op_costs.hpp);
//  - int_ops: integer instructions that the floating-point ones do not hide
//    (index arithmetic, 64-bit divisions, Philox rounds).
#pragma once

namespace strata::kernels {

struct Work {
  double bytes = 0;
  double flops = 0;
  double int_ops = 0;

  constexpr Work operator*(double n) const { return {bytes * n, flops * n, int_ops * n}; }
  constexpr Work operator+(const Work& o) const { return {bytes + o.bytes, flops + o.flops, int_ops + o.int_ops}; }
};

// The work of one item that streams `values` elements of T through device
// memory and takes `fp_slots` floating-point instruction slots (FMAs,
// kernels/core/op_costs.hpp) and `int_ops` integer instructions.
template <class T>
constexpr Work item_work(double values, double fp_slots, double int_ops = 0) {
  return {values * static_cast<double>(sizeof(T)), 2 * fp_slots, int_ops};
}

}  // namespace strata::kernels
