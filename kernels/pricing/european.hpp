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

  STRATA_HD Real payoff(Real z) const {
    const Real st = spot * std::exp(drift + diffusion * z);
    const Real intrinsic = call ? st - strike : strike - st;
    return intrinsic > Real(0) ? intrinsic : Real(0);
  }

  STRATA_HD double operator()(std::int64_t sample) const {
    const Real z = rng::philox_normal<Real>(key, static_cast<std::uint64_t>(sample), asset);
    double value = static_cast<double>(payoff(z));
    if (antithetic) value = 0.5 * (value + static_cast<double>(payoff(-z)));
    return discount * value;
  }
};

}  // namespace strata::kernels::pricing
