// European call/put under geometric Brownian motion, sampled exactly at
// maturity (no time stepping):
//   S_T = S_0 exp((r - q - sigma^2/2) T + sigma sqrt(T) Z),  Z ~ N(0, 1)
// The discounted payoff of one sample; with antithetic variates a sample is
// the pair (Z, -Z) and its value the mean of the two payoffs.
// Z for asset a of sample s is normal number a of Philox subsequence s, so
// every instrument on an asset sees the same draws (common random numbers).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/op_costs.hpp"
#include "kernels/core/work.hpp"
#include "kernels/rng/normal.hpp"
#include "kernels/rng/philox.hpp"

namespace strata::kernels::pricing {

template <class Real>
struct EuropeanGbm {
  rng::PhiloxKey key;
  std::uint32_t asset;   // index of the asset's normal within a sample
  bool call;
  bool antithetic;
  Real spot;
  Real strike;
  Real drift;            // (r - q - sigma^2/2) T
  Real diffusion;        // sigma sqrt(T)
  double discount;       // exp(-r T)

  // One sample: a Philox call and a Box-Muller pair (for this asset's
  // normal), then with antithetic two exps and payoffs; the moments in double.
  // The integer side is every instruction that is not floating-point
  // arithmetic on a sample's common path through nvcc 13.0's PTX of
  // LaneMoments<EuropeanGbm<Real>> for sm_90 (the Philox call, index
  // arithmetic, conversions, moves, compares, branches: kSampleOtherOps);
  // they issue at the integer pipe's rate and bound this kernel on an H200,
  // ahead of its FP64 slots.
  static constexpr double kSampleOtherOps = sizeof(Real) == 8 ? 330 : 170;
  static constexpr Work sample_work() {
    using C = OpCost<Real>;
    return Work{0, 2 * (C::log + C::sqrt + C::sincos + 2 * C::exp + 12), kSampleOtherOps};
  }

  // S_T / S_0 for the normal z.
  template <class Math = rng::ScalarMath>
  STRATA_HD Real growth(Real z) const {
    return Math::exp(drift + diffusion * z);
  }
  // The undiscounted payoff at S_T = spot * growth; a put's strike - S_T
  // written -(S_T - strike), the same number (rounding is symmetric in sign).
  STRATA_HD Real intrinsic(Real growth) const {
    const Real v = (call ? Real(1) : Real(-1)) * (spot * growth - strike);
    return v > Real(0) ? v : Real(0);
  }

  // The discounted payoffs of samples first .. first + W - 1 into out[],
  // in loops over the samples that the host vectorises (W = kBatch, Math =
  // rng::LaneMath: log, cos or sin and exp from libmvec, within a few ulp
  // of libm's; the host computes every sample here, so its prices are bitwise
  // the same for any chunk or rank count). Normal number `asset` of each
  // sample: word pair `pair` of Philox call `call`, its cosine or its sine
  // half (rng::philox_normal).
  template <int W, class Math>
  STRATA_HD void values(std::int64_t first, double* out) const {
    constexpr unsigned per_call = rng::NormalsPerCall<Real>::value;
    const std::uint64_t call = asset / per_call;
    // Constants in the loop: a runtime word choice there becomes a branch
    // that stops the vectoriser.
    switch (asset % per_call) {
      case 0: values_with<W, Math, 0, false>(first, call, out); break;
      case 1: values_with<W, Math, 0, true>(first, call, out); break;
      case 2: values_with<W, Math, 1, false>(first, call, out); break;
      default: values_with<W, Math, 1, true>(first, call, out); break;
    }
  }

 private:
  // Several loops, not one: g++ turns a select next to a vector call or a
  // conversion into a branch, which stops the vectoriser ("control flow in
  // loop").
  template <int W, class Math, unsigned kPair, bool kSine>
  STRATA_HD void values_with(std::int64_t first, std::uint64_t philox_call, double* out) const {
    Real z[W], up[W], down[W];
    STRATA_LANES()
    for (int w = 0; w < W; ++w) {
      const rng::PhiloxCounter bits =
          rng::philox4x32_10(rng::philox_counter(static_cast<std::uint64_t>(first + w), philox_call), key);
      Real u1, u2;
      rng::detail::box_muller_uniforms(bits, kPair, u1, u2);
      const Real r = rng::detail::box_muller_radius<Real, Math>(u1);
      const Real theta = rng::detail::box_muller_angle(u2);
      z[w] = r * (kSine ? Math::sin(theta) : Math::cos(theta));
    }
    // Exp and the payoff's select in loops of their own (see above).
    if (antithetic) {
      STRATA_LANES()
      for (int w = 0; w < W; ++w) {
        up[w] = growth<Math>(z[w]);
        down[w] = growth<Math>(-z[w]);
      }
      STRATA_LANES()
      for (int w = 0; w < W; ++w) {
        up[w] = intrinsic(up[w]);
        down[w] = intrinsic(down[w]);
      }
      STRATA_LANES()
      for (int w = 0; w < W; ++w) {
        out[w] = discount * (0.5 * (static_cast<double>(up[w]) + static_cast<double>(down[w])));
      }
    } else {
      STRATA_LANES()
      for (int w = 0; w < W; ++w) up[w] = growth<Math>(z[w]);
      STRATA_LANES()
      for (int w = 0; w < W; ++w) up[w] = intrinsic(up[w]);
      STRATA_LANES()
      for (int w = 0; w < W; ++w) out[w] = discount * static_cast<double>(up[w]);
    }
  }
};

}  // namespace strata::kernels::pricing
