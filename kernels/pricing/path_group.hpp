// Time-stepped paths shared by a group of instruments (same assets, same
// time grid), in the fixed block/lane shape of sample_blocks.hpp.
//
// Lane i of a launch simulates its samples one after the other; each sample
// is one path (two with antithetic variates: every normal negated) stored
// as log prices of the group's assets on the grid in the lane's column of
// `paths`, then every instrument of the group reads that path and adds its
// discounted payoff (less its shift) to its own lane moments. A block's
// moments therefore still depend only on (seed, block), never on chunks or
// ranks.
//
// The normals of a path are Philox subsequence `sample`, consumed in order
// from whole Philox calls: per step, first one per asset (correlated by the
// Cholesky factor of the assets' correlation), then each model's own draws
// (asset_models.hpp).
//
// Sobol' (`sobol`): each sample is point `sample` of the Sobol' sequence,
// simulated once per replicate (scrambling); replicate r of payoff p adds
// to moment slot p * replicates + r, so each replicate's mean comes out on
// its own. The assets' Brownian motions come from the point by a Brownian
// bridge over the grid, bridge step k of asset a in dimension
// k * n_assets + a (the terminal values first, in the best dimensions).
// The models' own draws (Heston's variance normal, Merton's jumps) stay
// Philox, subsequence sample + replicate * 2^53: as Sobol' dimensions they
// would double or triple the dimension count past Joe-Kuo's 3667 for a
// year of daily steps on a few assets, and they are the high, less
// important dimensions a bridge leaves anyway.
//
// Greeks (greeks.hpp): scenario c = 1..n_scenarios re-simulates each sample
// from the same normals (same Philox subsequence, same Sobol' point) with
// bumped inputs; `assets`, `dt`, `sqrt_dt`, `discount_at` and `payoffs` hold
// one set per scenario, scenario 0 the base. A Greek's per-sample value is
// a linear combination of payoffs over scenarios (its terms), accumulated in
// its own moment slots after the prices', like a price.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/pricing/asset_models.hpp"
#include "kernels/pricing/brownian_bridge.hpp"
#include "kernels/pricing/greeks.hpp"
#include "kernels/pricing/pathwise.hpp"
#include "kernels/pricing/payoffs.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "kernels/rng/inverse_normal.hpp"
#include "kernels/rng/normal.hpp"
#include "kernels/rng/philox.hpp"
#include "kernels/rng/sobol.hpp"

namespace strata::kernels::pricing {

inline constexpr int kMaxGroupAssets = 8;

// Normals of one subsequence in draw order, a whole Philox call at a time,
// times `sign` (-1: the antithetic path).
template <class Real>
struct NormalStream {
  rng::PhiloxKey key;
  std::uint64_t subsequence;
  Real sign;
  std::uint64_t call = 0;
  unsigned used = rng::NormalsPerCall<Real>::value;
  Real buffer[rng::NormalsPerCall<Real>::value] = {};

  STRATA_HD NormalStream(rng::PhiloxKey k, std::uint64_t s, Real sg) : key(k), subsequence(s), sign(sg) {}

  STRATA_HD Real operator()() {
    if (used == rng::NormalsPerCall<Real>::value) {
      rng::philox_normals<Real>(key, subsequence, call++, buffer);
      used = 0;
    }
    return sign * buffer[used++];
  }
};

template <class Real>
struct PathGroupKernel {
  rng::PhiloxKey key;
  std::int64_t first_block;   // global index of the launch's first block
  std::int64_t n_samples;     // global sample count
  std::int64_t n_lanes;       // lanes in this launch (blocks * kLanes)
  int steps;
  int n_assets;
  bool antithetic;
  bool correlated;
  const AssetStep<Real>* assets;
  const Real* cholesky;       // n_assets x n_assets, lower triangular, row-major
  const Real* dt;             // per step
  const Real* sqrt_dt;
  const int* fix_steps;
  const Real* weights;
  const double* discount_at;  // e^{-r t_k} at [k - 1]
  const double* exercise;     // american continuation coefficients
  const PayoffSpec<Real>* payoffs;
  const double* shifts;
  int n_payoffs;
  Real* paths;                // [copy][k = 0..steps][asset][lane]
  Real* variance;             // [copy][k = 0..steps-1][asset][lane]
  double* lanes;              // [payoff * replicates + replicate][moment][lane]
  // Control variates: payoff p adds value - beta[p] (control - control_mean[p]),
  // control = controls[p] on the same path; beta null or beta[p] == 0: none.
  const double* beta = nullptr;
  const PayoffSpec<Real>* controls = nullptr;
  const double* control_mean = nullptr;
  bool sobol = false;
  int replicates = 1;
  const std::uint32_t* directions = nullptr;   // sobol: [dimension][32]
  const std::uint32_t* scramble = nullptr;     // sobol: [replicate][dimension] Owen seeds
  const ::strata::pricing::BridgeStep* bridge = nullptr;   // sobol: the grid's plan, `steps` long
  int n_scenarios = 0;                 // bumped scenarios besides the base
  int n_greeks = 0;                    // Greek slots, after the payoffs' (shifts[n_payoffs + g])
  const GreekTerm* terms = nullptr;    // sorted by scenario
  const int* term_begin = nullptr;     // scenario c's terms: [term_begin[c], term_begin[c + 1])
  double* greek_acc = nullptr;         // [greek][lane]: the sample's value so far
  const PathTangent<Real>* tangents = nullptr;   // pathwise terms' tangents
  const Real* times = nullptr;         // t_k of the base grid at [k - 1]
  int slice_begin = 0, slice_end = kSlicesPerBlock;   // sample_blocks.hpp

  // Sobol': the assets' Brownian motions at the grid times, W(t_j) of asset
  // a in the path's cell (j, a) (overwritten by x as the path advances).
  STRATA_HD void sobol_bridge(std::int64_t sample, int replicate, Real sign, Real* x_out) const {
    const int dims = steps * n_assets;
    for (int a = 0; a < n_assets; ++a) x_out[a * n_lanes] = Real(0);
    for (int k = 0; k < steps; ++k) {
      const ::strata::pricing::BridgeStep& b = bridge[k];
      for (int a = 0; a < n_assets; ++a) {
        const int dim = k * n_assets + a;
        const std::uint32_t bits = rng::owen_scramble(rng::sobol_point(directions + dim * rng::kSobolBits,
                                                                        static_cast<std::uint32_t>(sample)),
                                                       scramble[replicate * dims + dim]);
        const Real z = sign * static_cast<Real>(rng::normal_quantile(rng::sobol_uniform(bits)));
        x_out[(b.point * n_assets + a) * n_lanes] = static_cast<Real>(b.left_weight) * x_out[(b.left * n_assets + a) * n_lanes] +
                                                    static_cast<Real>(b.right_weight) * x_out[(b.right * n_assets + a) * n_lanes] +
                                                    static_cast<Real>(b.stddev) * z;
      }
    }
  }

  STRATA_HD void simulate(std::int64_t sample, std::int64_t i, int copy, int replicate, int scenario = 0) const {
    const Real sign = copy == 0 ? Real(1) : Real(-1);
    const std::uint64_t stream = static_cast<std::uint64_t>(sample) + (static_cast<std::uint64_t>(replicate) << 53);
    NormalStream<Real> draw(key, stream, sign);
    const std::int64_t per_copy = static_cast<std::int64_t>(steps + 1) * n_assets * n_lanes;
    Real* x_out = paths + copy * per_copy + i;
    Real* w_out = variance + copy * per_copy + i;
    Real x[kMaxGroupAssets], v[kMaxGroupAssets], eps[kMaxGroupAssets], w_prev[kMaxGroupAssets];
    // The scenario's inputs; the normals (eps) come from the base grid.
    const AssetStep<Real>* as = assets + scenario * n_assets;
    const Real* dt_s = dt + scenario * steps;
    const Real* sqrt_dt_s = sqrt_dt + scenario * steps;
    if (sobol) sobol_bridge(sample, replicate, sign, x_out);
    for (int a = 0; a < n_assets; ++a) {
      x[a] = as[a].log_spot;
      v[a] = as[a].v0;
      w_prev[a] = Real(0);
      x_out[a * n_lanes] = x[a];
    }
    for (int k = 0; k < steps; ++k) {
      for (int a = 0; a < n_assets; ++a) {
        if (sobol) {
          // The increment over step k in units of sqrt(dt), read before
          // the step writes x into the cell.
          const Real w_next = x_out[(static_cast<std::int64_t>(k + 1) * n_assets + a) * n_lanes];
          eps[a] = (w_next - w_prev[a]) / sqrt_dt[k];
          w_prev[a] = w_next;
        } else {
          eps[a] = draw();
        }
      }
      for (int a = 0; a < n_assets; ++a) {
        Real w = eps[a];
        if (correlated) {
          w = Real(0);
          for (int b = 0; b <= a; ++b) w += cholesky[a * n_assets + b] * eps[b];
        }
        const Real var = step_asset(as[a], dt_s[k], sqrt_dt_s[k], w, x[a], v[a], draw);
        x_out[(static_cast<std::int64_t>(k + 1) * n_assets + a) * n_lanes] = x[a];
        w_out[(static_cast<std::int64_t>(k) * n_assets + a) * n_lanes] = var;
      }
    }
  }

  STRATA_HD PathView<Real> view(std::int64_t i, int copy, int scenario = 0) const {
    const std::int64_t per_copy = static_cast<std::int64_t>(steps + 1) * n_assets * n_lanes;
    return PathView<Real>{paths + copy * per_copy + i, variance + copy * per_copy + i, n_lanes, n_assets, steps,
                          fix_steps, weights, discount_at + scenario * steps, exercise};
  }

  // A payoff on the sample's path (the pair's mean with antithetic).
  STRATA_HD double sample_value(const PayoffSpec<Real>& spec, const PathView<Real>& v0,
                                const PathView<Real>& v1) const {
    const double value = path_payoff(spec, v0);
    return antithetic ? 0.5 * (value + path_payoff(spec, v1)) : value;
  }

  // A payoff's pathwise derivative on the sample's path (pair mean).
  STRATA_HD double sample_tangent(const PayoffSpec<Real>& spec, const PathView<Real>& v0, const PathView<Real>& v1,
                                  int tangent) const {
    const double value = pathwise_payoff(spec, v0, times, tangents[tangent]);
    return antithetic ? 0.5 * (value + pathwise_payoff(spec, v1, times, tangents[tangent])) : value;
  }

  // The host's launch over [0, n): the batched kernel where it applies,
  // else operator() lane by lane. Defined in path_group_batched.hpp (host
  // only), which a caller of parallel_for on this kernel includes.
  void host_for(std::int64_t n) const;

  STRATA_HD void operator()(std::int64_t i) const {
    const SampleWindow w = slice_window(first_block + i / kLanes, n_samples, slice_begin, slice_end);
    for (int q = 0; q < (n_payoffs + n_greeks) * replicates && slice_begin == 0; ++q) {
      lanes[(kMoments * q) * n_lanes + i] = 0.0;
      lanes[(kMoments * q + 1) * n_lanes + i] = 0.0;
    }
    for (std::int64_t s = w.first(i % kLanes); s < w.hi; s += kLanes) {
      for (int r = 0; r < replicates; ++r) {
        for (int c = 0; c <= n_scenarios; ++c) {
          simulate(s, i, 0, r, c);
          if (antithetic) simulate(s, i, 1, r, c);
          const PathView<Real> v0 = view(i, 0, c), v1 = antithetic ? view(i, 1, c) : v0;
          if (c == 0) {
            for (int p = 0; p < n_payoffs; ++p) {
              double value = sample_value(payoffs[p], v0, v1);
              if (beta != nullptr && beta[p] != 0.0)
                value -= beta[p] * (sample_value(controls[p], v0, v1) - control_mean[p]);
              add_moments(p * replicates + r, i, value - shifts[p]);
            }
            for (int g = 0; g < n_greeks; ++g) greek_acc[g * n_lanes + i] = 0.0;
          }
          if (n_greeks > 0) add_terms(c, i, v0, v1);
        }
        for (int g = 0; g < n_greeks; ++g) {
          add_moments((n_payoffs + g) * replicates + r, i, greek_acc[g * n_lanes + i] - shifts[n_payoffs + g]);
        }
      }
    }
  }

  // Scenario c's Greek terms on its path.
  STRATA_HD void add_terms(int c, std::int64_t i, const PathView<Real>& v0, const PathView<Real>& v1) const {
    for (int t = term_begin[c]; t < term_begin[c + 1]; ++t) {
      const GreekTerm& term = terms[t];
      const PayoffSpec<Real>& spec = payoffs[c * n_payoffs + term.payoff];
      greek_acc[term.greek * n_lanes + i] +=
          term.coef * (term.tangent < 0 ? sample_value(spec, v0, v1) : sample_tangent(spec, v0, v1, term.tangent));
    }
  }

  STRATA_HD void add_moments(int q, std::int64_t i, double d) const {
    lanes[(kMoments * q) * n_lanes + i] += d;
    lanes[(kMoments * q + 1) * n_lanes + i] += d * d;
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
