// What one call of a math function costs on an NVIDIA GPU, in instruction
// slots of the floating-point pipe of its precision (a slot is one FMA, 2
// flops in kernels::Work), for the kernels' work declarations
// (kernels/core/work.hpp). Counted from nvcc 13.0's PTX for sm_90 of a
// kernel calling the function alone (its fast path; the rare slow paths
// of arguments near overflow or huge sin/cos arguments are left out); a
// division and a square root, one PTX instruction each, as the reciprocal
// or reciprocal-square-root estimate and the Newton steps and rounding
// fix-up that instruction becomes in SASS. Estimates to within tens of
// percent: the cost model is asked for a factor of 2 (docs/gpu.md).
#pragma once

namespace strata::kernels {

template <class T>
struct OpCost;

template <>
struct OpCost<double> {
  static constexpr double exp = 20, log = 30, pow = 55, sqrt = 12, div = 12, sincos = 30, erfinv = 90, erfc = 70;
  // rsqrt (CUDA's): in sm_90 SASS the MUFU.RSQ64H estimate (its own pipe)
  // and one cubic correction, 2 DMUL and 3 DFMA; its range check (a
  // VIADD, an ISETP, a branch to the slow path and, in a loop, the call's
  // moves) is integer. The PTX's 8 had counted the check as FP64.
  static constexpr double rsqrt = 5;
};

template <>
struct OpCost<float> {
  static constexpr double exp = 6, log = 16, pow = 25, sqrt = 6, div = 8, sincos = 25, erfinv = 23, erfc = 44;
  // rsqrt.approx.f32 (rsqrtf: one MUFU instruction on its own pipe, one issue slot).
  static constexpr double rsqrt = 1;
};

// The integer instructions of one 64-bit division or remainder whose
// operands fit in 32 bits (nvcc's fast path), and of one Philox4x32-10
// call (ten rounds of two 32x32->64 multiplies, xors and key bumps).
inline constexpr double kDivide64IntOps = 25;
inline constexpr double kPhiloxIntOps = 80;

}  // namespace strata::kernels
