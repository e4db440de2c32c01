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
// one set per scenario, scenario 0 the base. A spot bump's scenario instead
// moves the base path of its asset by a log offset and evaluates its
// payoffs on that in double (GroupGreeks::spot_shifts; an American on all
// of them in one pass over the path); those scenarios come first, while the
// base path is still in the lane's storage. A Greek's
// per-sample value is a linear combination of payoffs over scenarios (its
// terms), accumulated in its own moment slots after the prices', like a
// price.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/work.hpp"
#include "kernels/pricing/asset_models.hpp"
#include "kernels/pricing/brownian_bridge.hpp"
#include "kernels/pricing/greeks.hpp"
#include "kernels/pricing/pathwise.hpp"
#include "kernels/pricing/payoffs.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "kernels/rng/inverse_normal.hpp"
#include "kernels/rng/normal.hpp"
#include "kernels/rng/normal_batch.hpp"
#include "kernels/rng/philox.hpp"
#include "kernels/rng/sobol.hpp"

namespace strata::kernels::pricing {

inline constexpr int kMaxGroupAssets = 8;

// Normals of W consecutive subsequences (lane l: first + l) in draw order,
// a whole Philox call at a time: philox_normals for one lane, the host's
// philox_normals_batch (libmvec) for a batch.
template <class Real, int W>
struct NormalStream {
  static constexpr unsigned kPerCall = rng::NormalsPerCall<Real>::value;
  rng::PhiloxKey key;
  std::uint64_t first;
  std::uint64_t call = 0;
  unsigned used = kPerCall;
  // [component][lane]; aligned, so that g++ peels no lanes off the batch's
  // loop (a peeled lane would call another libmvec variant: other bits).
  alignas(64) Real buffer[kPerCall * W];

  STRATA_HD NormalStream(rng::PhiloxKey k, std::uint64_t f) : key(k), first(f) {}

  STRATA_HD void operator()(Real* out) {
    if (used == kPerCall) {
      if constexpr (W == 1) {
        rng::philox_normals<Real>(key, first, call++, buffer);
      } else {
        rng::philox_normals_batch<Real, W>(key, first, call++, reinterpret_cast<Real (*)[W]>(buffer));
      }
      used = 0;
    }
    const Real* z = buffer + used++ * W;
    STRATA_LANES()
    for (int l = 0; l < W; ++l) out[l] = z[l];
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
  // A thread a sample instead of a thread a lane (a launch whose lanes
  // would leave the device idle): thread t is sample thread_begin + t % m
  // of the launch's window (sample_of), m = group_threads, in thread group
  // t / m (GroupGreeks::thread_of: which scenarios it simulates); n_lanes
  // counts the launch's threads, each with its own path column.
  bool per_sample = false;
  std::int64_t thread_begin = 0;
  std::int64_t group_threads = 0;
  int thread_groups = 1;
  // Whether a payoff reads the step variances (a continuously monitored
  // barrier's crossing probability); else they are not stored.
  bool store_variance = true;
  // The device work of one sample of one scenario (its paths and payoffs),
  // and of the busiest thread group's thread (thread_groups > 1), worked
  // out on the host for the cost model; never read on the device.
  Work per_scenario{}, per_thread{};

  // Samples a block contributes to the launch's window.
  STRATA_HD std::int64_t window_samples() const { return (slice_end - slice_begin) * kSliceSamples; }
  // Sample u of the window, numbered through its blocks in order (the last
  // block's may lie past n_samples).
  STRATA_HD std::int64_t sample_of(std::int64_t u) const {
    const std::int64_t per_block = window_samples();
    return (first_block + u / per_block) * kSamplesPerBlock + slice_begin * kSliceSamples + u % per_block;
  }
  // The samples of a launch of n threads: whole blocks' windows (a thread a
  // lane), or n.
  double samples(std::int64_t n) const {
    return per_sample ? static_cast<double>(n / thread_groups)
                      : static_cast<double>(n / kLanes) * static_cast<double>(window_samples());
  }
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
  // A thread a sample: each sample's values, [slot][u], which SampleMoments
  // then adds to the lanes' moments in the lanes' own order.
  double* values = nullptr;
  std::int64_t value_stride = 0;

  // Lane i's moments: zeroed (slots [0, slots)), or slot q's plus d.
  STRATA_HD void clear(int slots, std::int64_t n_lanes, std::int64_t i) const {
    for (int m = 0; m < kMoments * slots; ++m) lanes[m * n_lanes + i] = 0.0;
  }
  STRATA_HD void add(int q, std::int64_t n_lanes, std::int64_t i, double d) const {
    lanes[(kMoments * q) * n_lanes + i] += d;
    lanes[(kMoments * q + 1) * n_lanes + i] += d * d;
  }
  // Slot q's value d of the sample of lane (thread) i, window sample u.
  STRATA_HD void put(int q, std::int64_t n_lanes, std::int64_t i, std::int64_t u, double d) const {
    if (values != nullptr) {
      values[q * value_stride + u] = d;
    } else {
      add(q, n_lanes, i, d);
    }
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
  // Spot bumps: per scenario (the base's first) how its paths come about;
  // the payoffs and weights in double for the moved paths.
  const SpotShift* spot_shifts = nullptr;    // [scenario]
  const PayoffSpec<double>* specs = nullptr;   // [scenario][payoff]
  const double* weights = nullptr;
  // A thread a sample: the thread group that simulates scenario c
  // (thread_of[c]; the base and the spot bumps, which move its path, are
  // group 0), and each term's value coef * payoff per sample,
  // term_values[(term * replicates + r) * value_stride + u], which
  // SampleMoments adds up per Greek in term order, as acc does.
  const int* thread_of = nullptr;
  double* term_values = nullptr;

  STRATA_HD bool shifted(int scenario) const { return scenario > 0 && spot_shifts[scenario].asset >= 0; }
};

// The kernel is written once for W lanes i0.. that read consecutive samples
// (run<W, Math>): operator() runs one lane (CUDA, and the host where a
// group has Sobol' points or Greeks), host_for batches of kBatch in `omp
// simd` loops with libmvec (rng::LaneMath). The two differ in libmvec's last
// bits, so every sample of a group comes from one of them (bitwise the same
// for any chunk or rank count).
template <class Real>
struct PathGroupKernel {
  GroupPaths<Real> paths;
  GroupSobol sobol;
  GroupPayoffs<Real> payoffs;
  GroupGreeks<Real> greeks;

  // Where lanes i0.. keep copy `copy` of their paths, cell (k, a) at
  // (k * n_assets + a) * stride<W>(): one lane strided across the launch
  // (coalesced on a GPU), a batch in a contiguous piece of its own.
  template <int W>
  STRATA_HD std::int64_t stride() const { return W == 1 ? paths.n_lanes : W; }
  template <int W>
  STRATA_HD std::int64_t origin(std::int64_t i0, int copy) const {
    const std::int64_t cells = static_cast<std::int64_t>(paths.steps + 1) * paths.n_assets;
    if (W == 1) return copy * cells * paths.n_lanes + i0;
    return (i0 / W * (paths.antithetic ? 2 : 1) + copy) * cells * W;
  }

  // Sobol': the assets' Brownian motions at the grid times, W(t_j) of asset
  // a in the path's cell (j, a) (overwritten by x as the path advances).
  template <int W>
  STRATA_HD void sobol_bridge(std::int64_t sample, int replicate, Real* x_out) const {
    const int n_assets = paths.n_assets;
    const std::int64_t stride = this->stride<W>();
    const int dims = paths.steps * n_assets;
    const std::int64_t row = n_assets * stride;   // cell (j, a) of lane l: x_out[j * row + a * stride + l]
    for (int l = 0; l < W; ++l) {
      for (int a = 0; a < n_assets; ++a) x_out[a * stride + l] = Real(0);
      const auto point = static_cast<std::uint32_t>(sample + l);
      for (int k = 0; k < paths.steps; ++k) {
        const ::strata::pricing::BridgeStep& b = sobol.bridge[k];
        for (int a = 0; a < n_assets; ++a) {
          const int dim = k * n_assets + a;
          const std::uint32_t* directions = sobol.directions + dim * rng::kSobolBits;
          const std::uint32_t bits =
              rng::owen_scramble(rng::sobol_point(directions, point), sobol.scramble[replicate * dims + dim]);
          const Real z = static_cast<Real>(rng::normal_quantile(rng::sobol_uniform(bits)));
          Real* cell = x_out + a * stride + l;
          cell[b.point * row] = static_cast<Real>(b.left_weight) * cell[b.left * row] +
                                static_cast<Real>(b.right_weight) * cell[b.right * row] +
                                static_cast<Real>(b.stddev) * z;
        }
      }
    }
  }

  // The first `copies` copies of the paths of samples sample.. (lanes i0..)
  // from one set of draws (the antithetic copy negates them): per step one
  // normal per asset (Sobol': the bridge's increments), correlated by the
  // Cholesky factor, then each asset's own (Heston one, Merton two).
  template <int W, class Math>
  STRATA_HD void simulate(std::int64_t sample, std::int64_t i0, int copies, int replicate, int scenario) const {
    const int steps = paths.steps, n = paths.n_assets;
    const std::int64_t stride = this->stride<W>();
    const std::uint64_t stream = static_cast<std::uint64_t>(sample) + (static_cast<std::uint64_t>(replicate) << 53);
    NormalStream<Real, W> draw(paths.key, stream);
    Real* x[2] = {paths.paths + origin<W>(i0, 0), paths.paths + origin<W>(i0, 1)};
    Real* var[2] = {paths.variance + origin<W>(i0, 0), paths.variance + origin<W>(i0, 1)};
    auto cell = [&](int k, int a) { return (static_cast<std::int64_t>(k) * n + a) * stride; };
    // The scenario's inputs; the normals (eps) come from the base grid.
    const AssetStep<Real>* as = paths.assets + scenario * n;
    const Real* dt = paths.dt + scenario * steps;
    const Real* sqrt_dt = paths.sqrt_dt + scenario * steps;
    // One lane (a GPU thread; the host's lanes with Greeks or Sobol'
    // points) keeps its log prices at step k (xs) in the thread and stores
    // each step's for the payoffs, its variances only where a payoff reads
    // them (GroupPaths::store_variance). The host's batches step in the
    // path storage itself, which g++ vectorises best (a batch's cells are
    // contiguous, in cache).
    Real v[2][kMaxGroupAssets][W], xs[2][kMaxGroupAssets][W], eps[kMaxGroupAssets][W], own[kMaxGroupAssets][2][W],
        w_prev[kMaxGroupAssets][W];
    Real dw[W], next[W] = {}, step_variance[W];
    if (sobol.on()) sobol_bridge<W>(sample, replicate, x[0]);
    for (int a = 0; a < n; ++a) {
      const Real spot = as[a].log_spot, v0 = as[a].v0;
      for (int c = 0; c < copies; ++c) {
        STRATA_LANES()
        for (int l = 0; l < W; ++l) {
          x[c][cell(0, a) + l] = spot;
          xs[c][a][l] = spot;
          v[c][a][l] = v0;
          w_prev[a][l] = Real(0);
        }
      }
    }
    for (int k = 0; k < steps; ++k) {
      for (int a = 0; a < n; ++a) {
        if (sobol.on()) {
          // The increment over step k in units of sqrt(dt), read before
          // the step writes x into the cell.
          const Real* w_next = x[0] + cell(k + 1, a);
          for (int l = 0; l < W; ++l) {
            eps[a][l] = (w_next[l] - w_prev[a][l]) / paths.sqrt_dt[k];
            w_prev[a][l] = w_next[l];
          }
        } else {
          draw(eps[a]);
        }
      }
      for (int a = 0; a < n; ++a) {
        if (as[a].model != AssetModel::gbm) draw(own[a][0]);
        if (as[a].model == AssetModel::merton) draw(own[a][1]);
      }
      for (int a = 0; a < n; ++a) {
        const Real* wa = eps[a];
        if (paths.correlated) {
          STRATA_LANES()
          for (int l = 0; l < W; ++l) dw[l] = Real(0);
          for (int b = 0; b <= a; ++b) {
            const Real f = paths.cholesky[a * n + b];
            STRATA_LANES()
            for (int l = 0; l < W; ++l) dw[l] += f * eps[b][l];
          }
          wa = dw;
        }
        for (int c = 0; c < copies; ++c) {
          const Real sign = c == 0 ? Real(1) : Real(-1);
          if constexpr (W > 1) {
            step_lanes<W, Math>(as[a], dt[k], sqrt_dt[k], wa, own[a][0], own[a][1], sign, x[c] + cell(k, a),
                                x[c] + cell(k + 1, a), v[c][a], var[c] + cell(k, a));
            continue;
          }
          step_lanes<W, Math>(as[a], dt[k], sqrt_dt[k], wa, own[a][0], own[a][1], sign, xs[c][a], next, v[c][a],
                              paths.store_variance ? var[c] + cell(k, a) : step_variance);
          Real* const stored = x[c] + cell(k + 1, a);
          for (int l = 0; l < W; ++l) {
            stored[l] = next[l];
            xs[c][a][l] = next[l];
          }
        }
      }
    }
  }

  template <int W>
  STRATA_HD PathView<Real> view(std::int64_t i0, int copy, int scenario) const {
    return PathView<Real>{paths.paths + origin<W>(i0, copy), paths.variance + origin<W>(i0, copy), stride<W>(),
                          paths.n_assets, paths.steps, payoffs.fix_steps, payoffs.weights,
                          paths.discount_at + scenario * paths.steps, payoffs.exercise};
  }

  // A payoff (tangent >= 0: its pathwise derivative) on the lanes' samples,
  // the pair's mean with antithetic.
  template <int W, class Math>
  STRATA_HD void sample_values(const PayoffSpec<Real>& spec, std::int64_t i0, int scenario, double* out,
                               int tangent = -1) const {
    double down[W];
    for (int copy = 0; copy < (paths.antithetic ? 2 : 1); ++copy) {
      const PathView<Real> v = view<W>(i0, copy, scenario);
      double* o = copy == 0 ? out : down;
      if (tangent < 0 && (spec.kind == PayoffKind::european || spec.kind == PayoffKind::asian)) {
        average_payoffs<W, Math>(spec, v, o);
        continue;
      }
      for (int l = 0; l < W; ++l) {
        PathView<Real> vl = v;
        vl.x += l;
        vl.variance += l;
        o[l] = tangent < 0 ? path_payoff(spec, vl) : pathwise_payoff(spec, vl, greeks.times, greeks.tangents[tangent]);
      }
    }
    if (!paths.antithetic) return;
    STRATA_LANES()
    for (int l = 0; l < W; ++l) out[l] = 0.5 * (out[l] + down[l]);
  }

  // Payoff `payoff` (spec in double) on spot bumps c0..c1 - 1 of the
  // lanes' base paths (out[c - c0][lane]; wanted[c - c0]: the scenarios
  // whose terms read it), scenario c's asset spot_shifts[c].asset's log
  // prices moved by its log_offset: each lane's base path read in double
  // and moved as it is read (PathView::moved_asset), the pair's mean with
  // antithetic as in sample_values. An American values every bump in one
  // pass over the path (american_values); other payoffs, each wanted bump
  // on its own moved view. The offset is a multiple of the start's ulp
  // (greeks.cpp), so the move is exact and the scenarios of a sample differ
  // by the bump alone, not by roundings of their own.
  template <int W>
  STRATA_HD void moved_values(int payoff, int c0, int c1, const bool* wanted, std::int64_t i0,
                              double (*out)[W]) const {
    const int n = c1 - c0, n_payoffs = payoffs.n_payoffs;
    const PayoffSpec<double>* specs = greeks.specs + c0 * n_payoffs + payoff;
    const SpotShift* shifts = greeks.spot_shifts + c0;
    for (int l = 0; l < W; ++l) {
      double value[2][kMovedAtOnce];
      for (int copy = 0; copy < (paths.antithetic ? 2 : 1); ++copy) {
        const PathView<Real> base = view<W>(i0, copy, c0);
        PathView<double, Real> v{.x = base.x + l, .variance = base.variance + l, .stride = base.stride,
                                 .assets = base.assets, .steps = base.steps, .fix_steps = base.fix_steps,
                                 .weights = greeks.weights, .discount_at = base.discount_at,
                                 .exercise = base.exercise};
        if (specs->kind == PayoffKind::american) {
          american_values<kMaxGroupAssets>(specs, n_payoffs, shifts, n, v, value[copy]);
          continue;
        }
        for (int s = 0; s < n; ++s) {
          if (!wanted[s]) continue;
          v.discount_at = paths.discount_at + (c0 + s) * paths.steps;
          v.moved_asset = shifts[s].asset;
          v.moved_offset = shifts[s].log_offset;
          value[copy][s] = path_payoff(specs[s * n_payoffs], v);
        }
      }
      for (int s = 0; s < n; ++s) out[s][l] = paths.antithetic ? 0.5 * (value[0][s] + value[1][s]) : value[0][s];
    }
  }

  // Term t's values (coef * value) on the lanes' samples: kept apart (a
  // thread a sample: term_values) or added to its Greek's acc.
  template <int W>
  STRATA_HD void put_term(int t, int r, std::int64_t i0, int live, std::int64_t u0, const double* value) const {
    const GreekTerm& term = greeks.terms[t];
    if (greeks.term_values != nullptr) {
      double* const out = greeks.term_values + (t * paths.replicates + r) * payoffs.value_stride + u0;
      for (int l = 0; l < live; ++l) out[l] = term.coef * value[l];
      return;
    }
    for (int l = 0; l < W; ++l) greeks.acc[term.greek * paths.n_lanes + i0 + l] += term.coef * value[l];
  }

  // The terms of spot bumps [c_begin, c_end) (thread group 0's, while the
  // base path is in storage), payoff by payoff: its values on all the
  // bumps whose terms read it (moved_values), then those terms in order.
  // A Greek's terms are all one payoff's, so each Greek still adds its
  // terms in term order.
  template <int W>
  STRATA_HD void spot_terms(int c_begin, int c_end, int r, std::int64_t i0, int live, std::int64_t u0) const {
    double values[kMovedAtOnce][W];
    for (int p = 0; p < payoffs.n_payoffs; ++p) {
      for (int c0 = c_begin; c0 < c_end; c0 += kMovedAtOnce) {
        const int c1 = c_end - c0 < kMovedAtOnce ? c_end : c0 + kMovedAtOnce;
        const int t_begin = greeks.term_begin[c0], t_end = greeks.term_begin[c1];
        bool wanted[kMovedAtOnce] = {}, any = false;
        for (int t = t_begin; t < t_end; ++t) {
          if (greeks.terms[t].payoff != p) continue;
          wanted[greeks.terms[t].scenario - c0] = true;
          any = true;
        }
        if (!any) continue;
        moved_values<W>(p, c0, c1, wanted, i0, values);
        for (int t = t_begin; t < t_end; ++t) {
          if (greeks.terms[t].payoff == p) put_term<W>(t, r, i0, live, u0, values[greeks.terms[t].scenario - c0]);
        }
      }
    }
  }

  // The host's launch over [0, n) (a group with Sobol' points or Greeks:
  // lane by lane).
  void host_for(std::int64_t n) const {
    if (sobol.on() || greeks.n_scenarios > 0 || greeks.n_greeks > 0) {
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < n; ++i) run<1, rng::ScalarMath>(i);
      return;
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t g = 0; g < n / kBatch; ++g) run<kBatch, rng::LaneMath>(g * kBatch);
  }

  STRATA_HD void operator()(std::int64_t i) const { run<1, rng::ScalarMath>(i); }

  // Every sample simulated once per scenario and replicate (the cost model).
  // A thread a sample with thread groups: every thread as long as the
  // busiest group's.
  Work work(std::int64_t n) const {
    if (paths.per_sample && paths.thread_groups > 1) {
      return paths.per_thread * (static_cast<double>(n) * paths.replicates);
    }
    return paths.per_scenario * (paths.samples(n) * paths.replicates * (1 + greeks.n_scenarios));
  }

  // Lanes i0..i0 + W - 1: each sample's paths, then every payoff and Greek
  // on them added to the lane's moments (the lanes past the window's end
  // simulate but add nothing). A thread a sample: threads i0.. are window
  // samples u0.. (consecutive samples of one block), whose values go to
  // payoffs.values.
  template <int W, class Math>
  STRATA_HD void run(std::int64_t i0) const {
    if (paths.per_sample) {
      const std::int64_t m = paths.group_threads;
      const std::int64_t u0 = paths.thread_begin + i0 % m, s = paths.sample_of(u0);
      const std::int64_t left = paths.n_samples - s;
      sample_slots<W, Math>(s, i0, left <= 0 ? 0 : left < W ? static_cast<int>(left) : W, u0, static_cast<int>(i0 / m));
      return;
    }
    const SampleWindow win = slice_window(paths.first_block + i0 / kLanes, paths.n_samples, paths.slice_begin,
                                          paths.slice_end);
    for (int l = 0; l < W && paths.slice_begin == 0; ++l) {
      payoffs.clear((payoffs.n_payoffs + greeks.n_greeks) * paths.replicates, paths.n_lanes, i0 + l);
    }
    for (std::int64_t s = win.first(i0 % kLanes); s < win.hi; s += kLanes) {
      sample_slots<W, Math>(s, i0, win.hi - s < W ? static_cast<int>(win.hi - s) : W, -1, 0);
    }
  }

  // Samples s.. of lanes i0.. (W of them, the first `live` counted): their
  // paths, then every payoff and Greek on them, put to slots (put: window
  // sample u0 + l, or the lane's moments). A thread a sample runs the
  // scenarios of its thread group (GroupGreeks::thread_of) and keeps each
  // Greek term's value apart (term_values).
  template <int W, class Math>
  STRATA_HD void sample_slots(std::int64_t s, std::int64_t i0, int live, std::int64_t u0, int group) const {
    const std::int64_t n_lanes = paths.n_lanes;
    const int n_payoffs = payoffs.n_payoffs, n_greeks = greeks.n_greeks, replicates = paths.replicates;
    double* const terms_out = greeks.term_values;
    double value[W], control[W];
    for (int r = 0; r < replicates; ++r) {
      for (int c = 0; c <= greeks.n_scenarios; ++c) {
        if (greeks.thread_of != nullptr && greeks.thread_of[c] != group) continue;
        if (greeks.shifted(c)) {
          // The spot bumps (right after the base, in its thread group) at
          // once, from the first.
          if (greeks.shifted(c - 1)) continue;
          int end = c + 1;
          while (end <= greeks.n_scenarios && greeks.shifted(end)) ++end;
          spot_terms<W>(c, end, r, i0, live, u0);
          continue;
        }
        simulate<W, Math>(s, i0, paths.antithetic ? 2 : 1, r, c);
        for (int p = 0; p < n_payoffs && c == 0; ++p) {
          sample_values<W, Math>(payoffs.specs[p], i0, 0, value);
          if (payoffs.beta != nullptr && payoffs.beta[p] != 0.0) {
            sample_values<W, Math>(payoffs.controls[p], i0, 0, control);
            const double beta = payoffs.beta[p], mean = payoffs.control_mean[p];   // locals: no aliasing value[]
            STRATA_LANES()
            for (int l = 0; l < W; ++l) value[l] = value[l] - beta * (control[l] - mean);
          }
          for (int l = 0; l < live; ++l) {
            payoffs.put(p * replicates + r, n_lanes, i0 + l, u0 + l, value[l] - payoffs.shifts[p]);
          }
        }
        for (int g = 0; g < n_greeks && c == 0 && terms_out == nullptr; ++g) {
          for (int l = 0; l < W; ++l) greeks.acc[g * n_lanes + i0 + l] = 0.0;
        }
        // Scenario c's Greek terms on its paths; a term whose payoff and
        // tangent are the previous term's (a gamma's base terms) reuses its
        // values.
        int payoff = -1, tangent = -1;
        const int t_begin = n_greeks > 0 ? greeks.term_begin[c] : 0,
                  t_end = n_greeks > 0 ? greeks.term_begin[c + 1] : 0;
        for (int t = t_begin; t < t_end; ++t) {
          const GreekTerm& term = greeks.terms[t];
          if (!same_values(term, t == t_begin, payoff, tangent)) {
            sample_values<W, Math>(payoffs.specs[c * n_payoffs + term.payoff], i0, c, value, term.tangent);
          }
          put_term<W>(t, r, i0, live, u0, value);
        }
      }
      for (int g = 0; g < n_greeks && terms_out == nullptr; ++g) {
        for (int l = 0; l < live; ++l) {
          payoffs.put((n_payoffs + g) * replicates + r, n_lanes, i0 + l, u0 + l,
                      greeks.acc[g * n_lanes + i0 + l] - payoffs.shifts[n_payoffs + g]);
        }
      }
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
    lane_tree(lanes + kMoments * (j / n_blocks) * n_lanes + (j % n_blocks) * kLanes, 1, n_lanes,
              blocks_out + kMoments * j);
  }
};

// The lane moments of a thread-a-sample launch (GroupPaths::per_sample):
// index j = slot * n_lanes + lane over the launch's blocks, each lane adding
// its window's samples' values in the order and with the arithmetic that
// PathGroupKernel's lane adds them itself, so the moments are bitwise those
// of a thread-a-lane launch. A payoff slot's value is values[slot *
// value_stride + u] (u the window sample); a Greek slot's is its terms'
// values (GroupGreeks::term_values) added in term order from 0, less its
// shift, as the lane's acc adds them. From slice_begin > 0 it continues the
// lane's moments.
struct SampleMoments {
  const double* values;
  std::int64_t value_stride;
  double* lanes;                 // [slot][moment][lane]
  std::int64_t n_lanes;          // the launch's blocks * kLanes
  std::int64_t first_block, n_samples;
  int slice_begin, slice_end;
  // The Greeks' slots, after the payoffs' (payoff_slots of them).
  int payoff_slots = 0, replicates = 1, n_terms = 0;
  const GreekTerm* terms = nullptr;
  const double* term_values = nullptr;
  const double* shifts = nullptr;  // [payoff, then Greek]

  // Each value (a Greek's: each of its terms) read once, each lane's
  // moments read and written.
  Work work(std::int64_t n) const {
    const double per_lane = static_cast<double>((slice_end - slice_begin) * kSliceSamples) / kLanes;
    const double slots = static_cast<double>(n / n_lanes), greeks = slots - payoff_slots;
    const double reads = payoff_slots + (greeks > 0 ? static_cast<double>(n_terms * replicates) : 0.0);
    const double lanes_reads = static_cast<double>(n_lanes) * per_lane * reads;
    return Work{(lanes_reads + static_cast<double>(n) * 2 * kMoments) * sizeof(double),
                lanes_reads + static_cast<double>(n) * per_lane * 2, 0};
  }

  STRATA_HD void operator()(std::int64_t j) const {
    const std::int64_t q = j / n_lanes, i = j % n_lanes, b = i / kLanes;
    const SampleWindow win = slice_window(first_block + b, n_samples, slice_begin, slice_end);
    const std::int64_t u0 = b * (slice_end - slice_begin) * kSliceSamples - win.lo;
    double* m = lanes + kMoments * q * n_lanes + i;
    double s1 = slice_begin > 0 ? m[0] : 0.0, s2 = slice_begin > 0 ? m[n_lanes] : 0.0;
    const int greek = q < payoff_slots ? -1 : static_cast<int>(q / replicates) - payoff_slots / replicates;
    const std::int64_t r = q % replicates;
    for (std::int64_t s = win.first(i % kLanes); s < win.hi; s += kLanes) {
      double d;
      if (greek < 0) {
        d = values[q * value_stride + u0 + s];
      } else {
        d = 0.0;
        for (int t = 0; t < n_terms; ++t) {
          if (terms[t].greek == greek) d += term_values[(t * replicates + r) * value_stride + u0 + s];
        }
        d -= shifts[payoff_slots / replicates + greek];
      }
      s1 += d;
      s2 += d * d;
    }
    m[0] = s1;
    m[n_lanes] = s2;
  }
};

}  // namespace strata::kernels::pricing
