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
// bumped inputs; `assets`, `dt`, `sqrt_dt`, `discount_at` and `specs` hold
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

// The group's paths: its assets and grid (one set per scenario, the base
// first), and where a launch simulates them.
template <class Real>
struct GroupPaths {
  rng::PhiloxKey key{};
  int steps = 0;
  int n_assets = 0;
  bool antithetic = false;
  bool correlated = false;
  int replicates = 1;                        // of each sample (Sobol': scramblings)
  const AssetStep<Real>* assets = nullptr;   // [scenario][asset]
  const Real* cholesky = nullptr;            // n_assets x n_assets, lower triangular, row-major
  const Real* dt = nullptr;                  // [scenario][step]
  const Real* sqrt_dt = nullptr;
  const double* discount_at = nullptr;       // e^{-r t_k} at [scenario][k - 1]
  // The launch: its blocks' slices, and their path storage.
  std::int64_t first_block = 0;   // global index of the launch's first block
  std::int64_t n_samples = 0;     // global sample count
  std::int64_t n_lanes = 0;       // lanes in this launch (blocks * kLanes)
  int slice_begin = 0, slice_end = kSlicesPerBlock;   // sample_blocks.hpp
  Real* paths = nullptr;          // [copy][k = 0..steps][asset][lane]
  Real* variance = nullptr;       // [copy][k = 0..steps-1][asset][lane]
};

// Sobol' points in place of the assets' Philox normals (null: Philox).
struct GroupSobol {
  const std::uint32_t* directions = nullptr;   // [dimension][32]
  const std::uint32_t* scramble = nullptr;     // [replicate][dimension] Owen seeds
  const ::strata::pricing::BridgeStep* bridge = nullptr;   // the grid's plan, `steps` long
  STRATA_HD bool on() const { return directions != nullptr; }
};

// What the group prices on each path and where the moments go.
template <class Real>
struct GroupPayoffs {
  const PayoffSpec<Real>* specs = nullptr;   // [scenario][payoff]
  int n_payoffs = 0;
  const int* fix_steps = nullptr;
  const Real* weights = nullptr;
  const double* exercise = nullptr;          // american continuation coefficients
  const double* shifts = nullptr;            // the payoffs', then the Greeks'
  // Control variates: payoff p adds value - beta[p] (control - control_mean[p]),
  // control = controls[p] on the same path; beta[p] == 0: none.
  const double* beta = nullptr;
  const PayoffSpec<Real>* controls = nullptr;
  const double* control_mean = nullptr;
  double* lanes = nullptr;                   // [payoff * replicates + replicate][moment][lane]

  // Lane i's moments: zeroed (slots [0, slots)), or slot q's plus d.
  STRATA_HD void clear(int slots, std::int64_t n_lanes, std::int64_t i) const {
    for (int m = 0; m < kMoments * slots; ++m) lanes[m * n_lanes + i] = 0.0;
  }
  STRATA_HD void add(int q, std::int64_t n_lanes, std::int64_t i, double d) const {
    lanes[(kMoments * q) * n_lanes + i] += d;
    lanes[(kMoments * q + 1) * n_lanes + i] += d * d;
  }
  // Payoff p's value less its control variate's, where it has one.
  STRATA_HD bool has_control(int p) const { return beta != nullptr && beta[p] != 0.0; }
  STRATA_HD double controlled(int p, double value, double control) const {
    return value - beta[p] * (control - control_mean[p]);
  }
};

// Greeks (greeks.hpp): bumped scenarios and their terms.
template <class Real>
struct GroupGreeks {
  int n_scenarios = 0;                       // bumped scenarios besides the base
  int n_greeks = 0;                          // Greek slots, after the payoffs' (shifts[n_payoffs + g])
  const GreekTerm* terms = nullptr;          // sorted by scenario
  const int* term_begin = nullptr;           // scenario c's terms: [term_begin[c], term_begin[c + 1])
  const PathTangent<Real>* tangents = nullptr;   // pathwise terms' tangents
  const Real* times = nullptr;               // t_k of the base grid at [k - 1]
  double* acc = nullptr;                     // [greek][lane]: the sample's value so far
};

template <class Real>
struct PathGroupKernel {
  GroupPaths<Real> paths;
  GroupSobol sobol;
  GroupPayoffs<Real> payoffs;
  GroupGreeks<Real> greeks;

  // Sobol': the assets' Brownian motions at the grid times, W(t_j) of asset
  // a in the path's cell (j, a) (overwritten by x as the path advances).
  STRATA_HD void sobol_bridge(std::int64_t sample, int replicate, Real sign, Real* x_out) const {
    const int n_assets = paths.n_assets;
    const std::int64_t n_lanes = paths.n_lanes;
    const int dims = paths.steps * n_assets;
    for (int a = 0; a < n_assets; ++a) x_out[a * n_lanes] = Real(0);
    for (int k = 0; k < paths.steps; ++k) {
      const ::strata::pricing::BridgeStep& b = sobol.bridge[k];
      for (int a = 0; a < n_assets; ++a) {
        const int dim = k * n_assets + a;
        const std::uint32_t bits = rng::owen_scramble(rng::sobol_point(sobol.directions + dim * rng::kSobolBits,
                                                                        static_cast<std::uint32_t>(sample)),
                                                       sobol.scramble[replicate * dims + dim]);
        const Real z = sign * static_cast<Real>(rng::normal_quantile(rng::sobol_uniform(bits)));
        x_out[(b.point * n_assets + a) * n_lanes] = static_cast<Real>(b.left_weight) * x_out[(b.left * n_assets + a) * n_lanes] +
                                                    static_cast<Real>(b.right_weight) * x_out[(b.right * n_assets + a) * n_lanes] +
                                                    static_cast<Real>(b.stddev) * z;
      }
    }
  }

  STRATA_HD void simulate(std::int64_t sample, std::int64_t i, int copy, int replicate, int scenario = 0) const {
    const int steps = paths.steps, n_assets = paths.n_assets;
    const std::int64_t n_lanes = paths.n_lanes;
    const Real sign = copy == 0 ? Real(1) : Real(-1);
    const std::uint64_t stream = static_cast<std::uint64_t>(sample) + (static_cast<std::uint64_t>(replicate) << 53);
    NormalStream<Real> draw(paths.key, stream, sign);
    const std::int64_t per_copy = static_cast<std::int64_t>(steps + 1) * n_assets * n_lanes;
    Real* x_out = paths.paths + copy * per_copy + i;
    Real* w_out = paths.variance + copy * per_copy + i;
    Real x[kMaxGroupAssets], v[kMaxGroupAssets], eps[kMaxGroupAssets], w_prev[kMaxGroupAssets];
    // The scenario's inputs; the normals (eps) come from the base grid.
    const AssetStep<Real>* as = paths.assets + scenario * n_assets;
    const Real* dt_s = paths.dt + scenario * steps;
    const Real* sqrt_dt_s = paths.sqrt_dt + scenario * steps;
    if (sobol.on()) sobol_bridge(sample, replicate, sign, x_out);
    for (int a = 0; a < n_assets; ++a) {
      x[a] = as[a].log_spot;
      v[a] = as[a].v0;
      w_prev[a] = Real(0);
      x_out[a * n_lanes] = x[a];
    }
    for (int k = 0; k < steps; ++k) {
      for (int a = 0; a < n_assets; ++a) {
        if (sobol.on()) {
          // The increment over step k in units of sqrt(dt), read before
          // the step writes x into the cell.
          const Real w_next = x_out[(static_cast<std::int64_t>(k + 1) * n_assets + a) * n_lanes];
          eps[a] = (w_next - w_prev[a]) / paths.sqrt_dt[k];
          w_prev[a] = w_next;
        } else {
          eps[a] = draw();
        }
      }
      for (int a = 0; a < n_assets; ++a) {
        Real w = eps[a];
        if (paths.correlated) {
          w = Real(0);
          for (int b = 0; b <= a; ++b) w += paths.cholesky[a * n_assets + b] * eps[b];
        }
        const Real var = step_asset(as[a], dt_s[k], sqrt_dt_s[k], w, x[a], v[a], draw);
        x_out[(static_cast<std::int64_t>(k + 1) * n_assets + a) * n_lanes] = x[a];
        w_out[(static_cast<std::int64_t>(k) * n_assets + a) * n_lanes] = var;
      }
    }
  }

  STRATA_HD PathView<Real> view(std::int64_t i, int copy, int scenario = 0) const {
    const std::int64_t per_copy = static_cast<std::int64_t>(paths.steps + 1) * paths.n_assets * paths.n_lanes;
    return PathView<Real>{paths.paths + copy * per_copy + i, paths.variance + copy * per_copy + i, paths.n_lanes,
                          paths.n_assets, paths.steps, payoffs.fix_steps, payoffs.weights,
                          paths.discount_at + scenario * paths.steps, payoffs.exercise};
  }

  // A payoff on the sample's path (the pair's mean with antithetic).
  STRATA_HD double sample_value(const PayoffSpec<Real>& spec, const PathView<Real>& v0,
                                const PathView<Real>& v1) const {
    const double value = path_payoff(spec, v0);
    return paths.antithetic ? 0.5 * (value + path_payoff(spec, v1)) : value;
  }

  // A payoff's pathwise derivative on the sample's path (pair mean).
  STRATA_HD double sample_tangent(const PayoffSpec<Real>& spec, const PathView<Real>& v0, const PathView<Real>& v1,
                                  int tangent) const {
    const double value = pathwise_payoff(spec, v0, greeks.times, greeks.tangents[tangent]);
    return paths.antithetic ? 0.5 * (value + pathwise_payoff(spec, v1, greeks.times, greeks.tangents[tangent]))
                            : value;
  }

  // The host's launch over [0, n): the batched kernel where it applies,
  // else operator() lane by lane. Defined in path_group_batched.hpp (host
  // only), which a caller of parallel_for on this kernel includes.
  void host_for(std::int64_t n) const;

  STRATA_HD void operator()(std::int64_t i) const {
    const std::int64_t n_lanes = paths.n_lanes;
    const int n_payoffs = payoffs.n_payoffs, n_greeks = greeks.n_greeks, replicates = paths.replicates;
    const SampleWindow w = slice_window(paths.first_block + i / kLanes, paths.n_samples, paths.slice_begin,
                                        paths.slice_end);
    if (paths.slice_begin == 0) payoffs.clear((n_payoffs + n_greeks) * replicates, n_lanes, i);
    for (std::int64_t s = w.first(i % kLanes); s < w.hi; s += kLanes) {
      for (int r = 0; r < replicates; ++r) {
        for (int c = 0; c <= greeks.n_scenarios; ++c) {
          simulate(s, i, 0, r, c);
          if (paths.antithetic) simulate(s, i, 1, r, c);
          const PathView<Real> v0 = view(i, 0, c), v1 = paths.antithetic ? view(i, 1, c) : v0;
          if (c == 0) {
            for (int p = 0; p < n_payoffs; ++p) {
              double value = sample_value(payoffs.specs[p], v0, v1);
              if (payoffs.has_control(p)) value = payoffs.controlled(p, value, sample_value(payoffs.controls[p], v0, v1));
              payoffs.add(p * replicates + r, n_lanes, i, value - payoffs.shifts[p]);
            }
            for (int g = 0; g < n_greeks; ++g) greeks.acc[g * n_lanes + i] = 0.0;
          }
          if (n_greeks > 0) add_terms(c, i, v0, v1);
        }
        for (int g = 0; g < n_greeks; ++g) {
          payoffs.add((n_payoffs + g) * replicates + r, n_lanes, i, greeks.acc[g * n_lanes + i] - payoffs.shifts[n_payoffs + g]);
        }
      }
    }
  }

  // Scenario c's Greek terms on its path.
  STRATA_HD void add_terms(int c, std::int64_t i, const PathView<Real>& v0, const PathView<Real>& v1) const {
    for (int t = greeks.term_begin[c]; t < greeks.term_begin[c + 1]; ++t) {
      const GreekTerm& term = greeks.terms[t];
      const PayoffSpec<Real>& spec = payoffs.specs[c * payoffs.n_payoffs + term.payoff];
      greeks.acc[term.greek * paths.n_lanes + i] +=
          term.coef * (term.tangent < 0 ? sample_value(spec, v0, v1) : sample_tangent(spec, v0, v1, term.tangent));
    }
  }
};

// LaneTree for a group's [payoff][moment][lane] layout: index j = payoff *
// blocks + block; writes blocks_out[kMoments * j + m], so each payoff's
// block moments are contiguous.
struct GroupLaneTree {
  double* lanes;
  double* blocks_out;
  std::int64_t n_lanes;
  std::int64_t n_blocks;

  STRATA_HD void operator()(std::int64_t j) const {
    double* a = lanes + kMoments * (j / n_blocks) * n_lanes + (j % n_blocks) * kLanes;
    lane_tree(a, 1, n_lanes);
    for (int m = 0; m < kMoments; ++m) blocks_out[kMoments * j + m] = a[m * n_lanes];
  }
};

}  // namespace strata::kernels::pricing
