// Time-stepped paths shared by a group of instruments (same asset, same time
// grid), in the fixed block/lane shape of sample_blocks.hpp.
//
// Lane i of a launch simulates its samples one after the other; each sample
// is one path (two with antithetic variates: Z and -Z) stored as log prices
// on the grid in the lane's column of `paths`, then every instrument of the
// group reads that path and adds its discounted payoff (less its shift) to
// its own lane moments. A block's moments therefore still depend only on
// (seed, block), never on chunks or ranks.
//
// GBM steps are exact: x_{k+1} = x_k + (r - q - sigma^2/2) dt_k + sigma sqrt(dt_k) Z_k.
// Z_k is normal number k of Philox subsequence `sample`, consumed in order
// from whole Philox calls.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/pricing/payoffs.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "kernels/rng/normal.hpp"
#include "kernels/rng/philox.hpp"

namespace strata::kernels::pricing {

// Normals of one subsequence in draw order, a whole Philox call at a time.
template <class Real>
struct NormalStream {
  rng::PhiloxKey key;
  std::uint64_t subsequence;
  std::uint64_t call = 0;
  unsigned used = rng::NormalsPerCall<Real>::value;
  Real buffer[rng::NormalsPerCall<Real>::value] = {};

  STRATA_HD NormalStream(rng::PhiloxKey k, std::uint64_t s) : key(k), subsequence(s) {}

  STRATA_HD Real next() {
    if (used == rng::NormalsPerCall<Real>::value) {
      rng::philox_normals<Real>(key, subsequence, call++, buffer);
      used = 0;
    }
    return buffer[used++];
  }
};

template <class Real>
struct GbmPathGroup {
  rng::PhiloxKey key;
  std::int64_t first_block;   // global index of the launch's first block
  std::int64_t n_samples;     // global sample count
  std::int64_t n_lanes;       // lanes in this launch (blocks * kLanes)
  int steps;
  bool antithetic;
  Real log_spot;
  const Real* drift;          // per step: (r - q - sigma^2/2) dt_k
  const Real* diffusion;      // per step: sigma sqrt(dt_k)
  const Real* variance;       // per step: sigma^2 dt_k
  const int* fix_steps;
  const double* discount_at;  // e^{-r t_k} at [k - 1]
  const PayoffSpec<Real>* payoffs;
  const double* shifts;
  int n_payoffs;
  Real* paths;                // [copy][k = 0..steps][lane]
  double* lanes;              // [payoff][moment][lane]

  STRATA_HD void operator()(std::int64_t i) const {
    const std::int64_t block = first_block + i / kLanes;
    const std::int64_t begin = block * kSamplesPerBlock;
    std::int64_t end = begin + kSamplesPerBlock;
    if (end > n_samples) end = n_samples;
    for (int p = 0; p < n_payoffs; ++p) {
      lanes[(kMoments * p) * n_lanes + i] = 0.0;
      lanes[(kMoments * p + 1) * n_lanes + i] = 0.0;
    }
    const std::int64_t copy_stride = static_cast<std::int64_t>(steps + 1) * n_lanes;
    Real* x0 = paths + i;
    Real* x1 = x0 + copy_stride;
    for (std::int64_t s = begin + i % kLanes; s < end; s += kLanes) {
      NormalStream<Real> z{key, static_cast<std::uint64_t>(s)};
      Real a = log_spot, b = log_spot;
      x0[0] = a;
      if (antithetic) x1[0] = b;
      for (int k = 0; k < steps; ++k) {
        const Real dz = diffusion[k] * z.next();
        a += drift[k] + dz;
        x0[(k + 1) * n_lanes] = a;
        if (antithetic) {
          b += drift[k] - dz;
          x1[(k + 1) * n_lanes] = b;
        }
      }
      const PathView<Real> v0{x0, n_lanes, steps, variance, fix_steps, discount_at};
      const PathView<Real> v1{x1, n_lanes, steps, variance, fix_steps, discount_at};
      for (int p = 0; p < n_payoffs; ++p) {
        double value = path_payoff(payoffs[p], v0);
        if (antithetic) value = 0.5 * (value + path_payoff(payoffs[p], v1));
        const double d = value - shifts[p];
        lanes[(kMoments * p) * n_lanes + i] += d;
        lanes[(kMoments * p + 1) * n_lanes + i] += d * d;
      }
    }
  }
};

// The pairwise lane tree of LaneTree for a group's [payoff][moment][lane]
// layout: index j = payoff * blocks + block; writes
// blocks_out[kMoments * j + m], so each payoff's block moments are contiguous.
struct GroupLaneTree {
  double* lanes;
  double* blocks_out;
  std::int64_t n_lanes;
  std::int64_t n_blocks;

  STRATA_HD void operator()(std::int64_t j) const {
    const std::int64_t p = j / n_blocks, b = j % n_blocks;
    for (std::int64_t half = kLanes / 2; half > 0; half /= 2) {
      for (std::int64_t l = 0; l < half; ++l) {
        for (int m = 0; m < kMoments; ++m) {
          double* row = lanes + (kMoments * p + m) * n_lanes + b * kLanes;
          row[l] += row[l + half];
        }
      }
    }
    for (int m = 0; m < kMoments; ++m) blocks_out[kMoments * j + m] = lanes[(kMoments * p + m) * n_lanes + b * kLanes];
  }
};

}  // namespace strata::kernels::pricing
