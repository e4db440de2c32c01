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
#include "kernels/core/vector_math.hpp"
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
  STRATA_HD Real payoff(Real z) const { return intrinsic(growth(z)); }

  STRATA_HD double operator()(std::int64_t sample) const {
    const Real z = rng::philox_normal<Real>(key, static_cast<std::uint64_t>(sample), asset);
    double value = static_cast<double>(payoff(z));
    if (antithetic) value = 0.5 * (value + static_cast<double>(payoff(-z)));
    return discount * value;
  }

  // The host's form: the discounted payoffs of samples first .. first +
  // kBatch - 1 into out[], the same draws as operator() but in one `omp
  // simd` loop that GCC vectorises across samples (Philox's 32-bit
  // multiplies, Box-Muller, the payoff), with log, cos or sin and exp from
  // libmvec (kernels/core/vector_math.hpp). The host computes every sample
  // here, so its prices are bitwise the same for any chunk or rank count;
  // they differ from operator()'s in the last bits of the transcendentals.
  static constexpr int kBatch = 16;   // whole vectors at every width up to AVX-512 floats

  void batch(std::int64_t first, double* out) const {
    // Normal number `asset` of each sample: word pair `pair` of Philox
    // call `call`, its cosine or its sine half (rng::philox_normal).
    constexpr unsigned per_call = rng::NormalsPerCall<Real>::value;
    const std::uint64_t call = asset / per_call;
    // Constants in the loop: a runtime word choice there becomes a branch
    // that stops the vectoriser.
    switch (asset % per_call) {
      case 0: batch_with<0, false>(first, call, out); break;
      case 1: batch_with<0, true>(first, call, out); break;
      case 2: batch_with<1, false>(first, call, out); break;
      default: batch_with<1, true>(first, call, out); break;
    }
  }

 private:
  // Several loops, not one: g++ turns a select next to a vector call or a
  // conversion into a branch, which stops the vectoriser ("control flow in
  // loop").
  template <unsigned kPair, bool kSine>
  void batch_with(std::int64_t first, std::uint64_t philox_call, double* out) const {
    Real z[kBatch], up[kBatch], down[kBatch];
#pragma omp simd
    for (int w = 0; w < kBatch; ++w) {
      const rng::PhiloxCounter bits =
          rng::philox4x32_10(rng::philox_counter(static_cast<std::uint64_t>(first + w), philox_call), key);
      Real u1, u2;
      rng::detail::box_muller_uniforms(bits, kPair, u1, u2);
      const Real r = rng::detail::box_muller_radius<Real, rng::LaneMath>(u1);
      const Real theta = rng::detail::box_muller_angle(u2);
      z[w] = r * (kSine ? vmath::sin(theta) : vmath::cos(theta));
    }
    // Exp and the payoff's select in loops of their own (see above).
    if (antithetic) {
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) {
        up[w] = growth<rng::LaneMath>(z[w]);
        down[w] = growth<rng::LaneMath>(-z[w]);
      }
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) {
        up[w] = intrinsic(up[w]);
        down[w] = intrinsic(down[w]);
      }
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) {
        out[w] = discount * (0.5 * (static_cast<double>(up[w]) + static_cast<double>(down[w])));
      }
    } else {
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) up[w] = growth<rng::LaneMath>(z[w]);
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) up[w] = intrinsic(up[w]);
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) out[w] = discount * static_cast<double>(up[w]);
    }
  }
};

}  // namespace strata::kernels::pricing
