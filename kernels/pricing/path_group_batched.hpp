// PathGroupKernel::host_for (path_group.hpp), host only: index g covers
// the kBatch consecutive lanes g*kBatch.., which read consecutive samples.
// The batch simulates sample s of each of them together, every step in
// `omp simd` loops across the lanes over asset_models.hpp's formulas (with
// rng::LaneMath: libmvec), then evaluates each payoff on the batch's paths,
// and every lane adds its own values in PathGroupKernel's order. The draws
// are PathGroupKernel's (subsequence sample + replicate * 2^53; per step
// one normal per asset, then each asset's own; the antithetic path negates
// them), so the estimates agree with it up to libmvec's last bits.
//
// Payoffs: the Asian and the European (the hot kinds, and the Asian's
// geometric control) in vector loops with libmvec's exp; every other kind
// through path_payoff lane by lane, so kinds added there work here too.
//
// Path storage: batch g owns cells [g * copies * cells, ...) of `paths`
// and `variance`, laid out [copy][k][asset][w] (stride kBatch): each batch
// writes and reads one contiguous piece.
#pragma once

#include <cstdint>

#include "kernels/core/vector_math.hpp"
#include "kernels/pricing/asset_models.hpp"
#include "kernels/pricing/path_group.hpp"
#include "kernels/rng/normal_batch.hpp"

namespace strata::kernels::pricing {

// One copy of one asset over one step for the batch's lanes: prev/next are
// the lanes' log prices before and after it, w their (correlated) Brownian
// increments and e, j the model's own normals, all times `sign` (-1: the
// antithetic path); var gets the step variance, v (Heston) is updated in
// place. The asset is read from a local copy (stores through next or v could
// alias the caller's, and reloads stop the vectoriser); a vector call (erfc,
// log), and a select next to one, run in loops of their own (g++ would make
// the select a branch that stops the vectoriser).
template <int kBatch, class Real>
inline void gbm_lanes(const AssetStep<Real>& asset, Real dt, Real sqrt_dt, const Real* w, Real sign, const Real* prev,
                      Real* next, Real* var) {
  const AssetStep<Real> a = asset;
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    Real x = prev[l];
    var[l] = gbm_step(a, dt, sqrt_dt, sign * w[l], x);
    next[l] = x;
  }
}

// Merton: Poisson's inversion runs in every lane until none is still below
// its uniform: each lane takes the terms poisson_count would alone.
template <int kBatch, class Real>
inline void merton_lanes(const AssetStep<Real>& asset, Real dt, Real sqrt_dt, const Real* w, const Real* e,
                         const Real* j, Real sign, const Real* prev, Real* next, Real* var) {
  const AssetStep<Real> a = asset;
  gbm_lanes<kBatch>(a, dt, sqrt_dt, w, sign, prev, next, var);
  const Real mean = a.jump_intensity * dt, p0 = std::exp(-mean);
  Real u[kBatch], p[kBatch], cdf[kBatch], count[kBatch], jump[kBatch];
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) u[l] = normal_cdf_r<Real, rng::LaneMath>(sign * e[l]);
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) { p[l] = cdf[l] = p0; count[l] = Real(0); }
  for (int n = 1; n <= 64; ++n) {
    const Real mean_over_n = mean / static_cast<Real>(n), rn = static_cast<Real>(n);
    int active = 0;
#pragma omp simd reduction(+ : active)
    for (int l = 0; l < kBatch; ++l) active += poisson_term(u[l], mean_over_n, rn, p[l], cdf[l], count[l]) ? 1 : 0;
    if (active == 0) break;
  }
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) jump[l] = merton_jumps(a, count[l], sign * j[l]);
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) next[l] = count[l] > Real(0) ? next[l] + jump[l] : next[l];
}

template <int kBatch, class Real>
inline void heston_ft_lanes(const AssetStep<Real>& asset, Real dt, Real sqrt_dt, const Real* w, const Real* e,
                            Real sign, const Real* prev, Real* next, Real* v, Real* var) {
  const AssetStep<Real> a = asset;
  const Real c = std::sqrt(Real(1) - a.rho * a.rho);
  Real positive[kBatch], root[kBatch];
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) positive[l] = truncated(v[l]);
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) root[l] = std::sqrt(positive[l]);
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    Real x = prev[l];
    var[l] = heston_ft_step(a, c, dt, sqrt_dt, sign * w[l], sign * e[l], positive[l], root[l], x, v[l]);
    next[l] = x;
  }
}

// Andersen's QE: both branches in every lane, then a select.
template <int kBatch, class Real>
inline void heston_qe_lanes(const AssetStep<Real>& a, Real dt, const Real* w, const Real* e, Real sign,
                            const Real* prev, Real* next, Real* v, Real* var) {
  using Qe = HestonQe<Real>;
  const Qe q(a, dt);
  Real zv[kBatch], zp[kBatch], m[kBatch], psi[kBatch], quad[kBatch], p[kBatch], tail[kBatch], lg[kBatch];
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    q.normals(sign * w[l], sign * e[l], zv[l], zp[l]);
    m[l] = q.mean(v[l]);
    psi[l] = q.psi(v[l], m[l]);
    quad[l] = Qe::quadratic(m[l], psi[l], zv[l]);
    p[l] = Qe::point_mass(psi[l]);
  }
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) tail[l] = Qe::template tail<rng::LaneMath>(zv[l]);
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) lg[l] = rng::LaneMath::log(Qe::ratio(p[l], tail[l]));
  Real next_v[kBatch];
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) next_v[l] = Qe::exponential(m[l], p[l], tail[l], lg[l]);
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) next_v[l] = psi[l] <= Real(1.5) ? quad[l] : next_v[l];
#pragma omp simd
  for (int l = 0; l < kBatch; ++l) {
    Real x = prev[l];
    var[l] = q.advance(next_v[l], zp[l], x, v[l]);
    next[l] = x;
  }
}

template <class Real>
struct PathGroupBatched {
  static constexpr int kBatch = 16;  // whole vectors at every width up to AVX-512 floats
  static_assert(kLanes % kBatch == 0, "a batch of lanes must not straddle two blocks");
  static_assert(kSliceSamples % kBatch == 0, "a batch of lanes must not straddle two slices");
  static constexpr unsigned kPerCall = rng::NormalsPerCall<Real>::value;

  GroupPaths<Real> paths;   // its paths/variance hold the batches' pieces
  GroupPayoffs<Real> payoffs;

  explicit PathGroupBatched(const PathGroupKernel<Real>& k) : paths(k.paths), payoffs(k.payoffs) {}

  std::int64_t cells() const { return static_cast<std::int64_t>(paths.steps + 1) * paths.n_assets * kBatch; }
  template <class P>
  P* row(P* base, int copy, int step, int asset) const {
    return base + copy * cells() + (static_cast<std::int64_t>(step) * paths.n_assets + asset) * kBatch;
  }

  void operator()(std::int64_t g) const {
    const std::int64_t i0 = g * kBatch;
    const SampleWindow win = slice_window(paths.first_block + i0 / kLanes, paths.n_samples, paths.slice_begin, paths.slice_end);
    const std::int64_t end = win.hi;
    const int copies = paths.antithetic ? 2 : 1;
    Real* x = paths.paths + g * copies * cells();
    Real* var = paths.variance + g * copies * cells();
    for (int w = 0; w < kBatch && paths.slice_begin == 0; ++w) {
      payoffs.clear(payoffs.n_payoffs * paths.replicates, paths.n_lanes, i0 + w);
    }
    for (std::int64_t s = win.first(i0 % kLanes); s < end; s += kLanes) {
      const int live = end - s < kBatch ? static_cast<int>(end - s) : kBatch;
      for (int r = 0; r < paths.replicates; ++r) {
        simulate(static_cast<std::uint64_t>(s) + (static_cast<std::uint64_t>(r) << 53), x, var);
        add_payoffs(x, var, i0, r, live);
      }
    }
  }

  // Both copies of the batch's paths from one set of draws, in
  // PathGroupKernel's order: per step one normal per asset, then each
  // asset's own (Heston one, Merton two), asset by asset.
  void simulate(std::uint64_t stream, Real* x, Real* var) const {
    const int copies = paths.antithetic ? 2 : 1;
    const int n = paths.n_assets;
    Real v[2][kMaxGroupAssets][kBatch];
    for (int c = 0; c < copies; ++c) {
      for (int a = 0; a < n; ++a) {
        Real* x0 = row(x, c, 0, a);
        const Real spot = paths.assets[a].log_spot, v0 = paths.assets[a].v0;
#pragma omp simd
        for (int w = 0; w < kBatch; ++w) {
          x0[w] = spot;
          v[c][a][w] = v0;
        }
      }
    }
    Real normals[kPerCall][kBatch];
    // own[a][d]: asset a's own draw d (Heston one, Merton two).
    Real eps[kMaxGroupAssets][kBatch], own[kMaxGroupAssets][2][kBatch], dw[kBatch];
    unsigned used = kPerCall;
    std::uint64_t call = 0;
    auto draw = [&](Real* out) {
      if (used == kPerCall) {
        rng::philox_normals_batch<Real, kBatch>(paths.key, stream, call++, normals);
        used = 0;
      }
      const Real* z = normals[used++];
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) out[w] = z[w];
    };
    for (int step = 0; step < paths.steps; ++step) {
      for (int a = 0; a < n; ++a) draw(eps[a]);
      for (int a = 0; a < n; ++a) {
        const AssetModel model = paths.assets[a].model;
        if (model != AssetModel::gbm) draw(own[a][0]);
        if (model == AssetModel::merton) draw(own[a][1]);
      }
      for (int a = 0; a < n; ++a) {
        const Real* wa = eps[a];
        if (paths.correlated) {
#pragma omp simd
          for (int w = 0; w < kBatch; ++w) dw[w] = Real(0);
          for (int b = 0; b <= a; ++b) {
            const Real l = paths.cholesky[a * n + b];
#pragma omp simd
            for (int w = 0; w < kBatch; ++w) dw[w] += l * eps[b][w];
          }
          wa = dw;
        }
        const AssetStep<Real>& as = paths.assets[a];
        const Real dt = paths.dt[step], sqrt_dt = paths.sqrt_dt[step];
        for (int c = 0; c < copies; ++c) {
          const Real sign = c == 0 ? Real(1) : Real(-1);
          const Real* prev = row(x, c, step, a);
          Real* next = row(x, c, step + 1, a);
          Real* sv = row(var, c, step, a);
          if (as.model == AssetModel::heston_qe) {
            heston_qe_lanes<kBatch>(as, dt, wa, own[a][0], sign, prev, next, v[c][a], sv);
          } else if (as.model == AssetModel::heston_full_truncation) {
            heston_ft_lanes<kBatch>(as, dt, sqrt_dt, wa, own[a][0], sign, prev, next, v[c][a], sv);
          } else if (as.model == AssetModel::merton) {
            merton_lanes<kBatch>(as, dt, sqrt_dt, wa, own[a][0], own[a][1], sign, prev, next, sv);
          } else {
            gbm_lanes<kBatch>(as, dt, sqrt_dt, wa, sign, prev, next, sv);
          }
        }
      }
    }
  }

  // The discounted payoff of `spec` on copy c of each lane's path.
  void payoff(const PayoffSpec<Real>& spec, const Real* x, const Real* var, int c, double* out) const {
    const Real sign = spec.call ? Real(1) : Real(-1);
    Real value[kBatch];
    // A put's strike - S is written -(S - strike), the same number.
    auto discounted = [&] {
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) value[w] = positive(sign * (value[w] - spec.strike));
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) out[w] = spec.discount * static_cast<double>(value[w]);
    };
    switch (spec.kind) {
      case PayoffKind::european: {
        const Real* xt = row(x, c, paths.steps, spec.asset);
#pragma omp simd
        for (int w = 0; w < kBatch; ++w) value[w] = vmath::exp(xt[w]);
        discounted();
        return;
      }
      case PayoffKind::asian: {
        // Arithmetic: mean of S at the fixings; geometric: exp of the mean log.
#pragma omp simd
        for (int w = 0; w < kBatch; ++w) value[w] = Real(0);
        for (int f = 0; f < spec.fixings; ++f) {
          const Real* xf = row(x, c, payoffs.fix_steps[spec.fix_begin + f], spec.asset);
          if (spec.geometric) {
#pragma omp simd
            for (int w = 0; w < kBatch; ++w) value[w] += xf[w];
          } else {
#pragma omp simd
            for (int w = 0; w < kBatch; ++w) value[w] += vmath::exp(xf[w]);
          }
        }
        const Real n = static_cast<Real>(spec.fixings);
#pragma omp simd
        for (int w = 0; w < kBatch; ++w) value[w] /= n;
        if (spec.geometric) {
#pragma omp simd
          for (int w = 0; w < kBatch; ++w) value[w] = vmath::exp(value[w]);
        }
        discounted();
        return;
      }
      default:
        for (int w = 0; w < kBatch; ++w) {
          const PathView<Real> view{
              x + c * cells() + w, var + c * cells() + w, kBatch, paths.n_assets, paths.steps, payoffs.fix_steps,
              payoffs.weights,           paths.discount_at,      payoffs.exercise};
          out[w] = path_payoff(spec, view);
        }
    }
  }

  // A payoff on the batch's samples (the pair's mean with antithetic).
  void sample_values(const PayoffSpec<Real>& spec, const Real* x, const Real* var, double* out) const {
    payoff(spec, x, var, 0, out);
    if (!paths.antithetic) return;
    double down[kBatch];
    payoff(spec, x, var, 1, down);
#pragma omp simd
    for (int w = 0; w < kBatch; ++w) out[w] = 0.5 * (out[w] + down[w]);
  }

  // PathGroupKernel::operator()'s sums, for the batch's live lanes.
  void add_payoffs(const Real* x, const Real* var, std::int64_t i0, int r, int live) const {
    double value[kBatch], control[kBatch];
    for (int p = 0; p < payoffs.n_payoffs; ++p) {
      sample_values(payoffs.specs[p], x, var, value);
      if (payoffs.has_control(p)) {
        sample_values(payoffs.controls[p], x, var, control);
        const GroupPayoffs<Real> own = payoffs;   // a local: stores to value[] cannot alias it
#pragma omp simd
        for (int w = 0; w < kBatch; ++w) value[w] = own.controlled(p, value[w], control[w]);
      }
      for (int w = 0; w < live; ++w) payoffs.add(p * paths.replicates + r, paths.n_lanes, i0 + w, value[w] - payoffs.shifts[p]);
    }
  }
};

// The batched kernel covers every asset model on Philox draws without
// scenarios: a group with Sobol' points or Greeks runs operator() (all its
// samples: the two kernels' results differ in libmvec's last bits, and a
// run's samples must all come from one kernel to stay bitwise
// reproducible for any chunk or rank count).
template <class Real>
void PathGroupKernel<Real>::host_for(std::int64_t n) const {
  if (sobol.on() || greeks.n_scenarios > 0 || greeks.n_greeks > 0) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) (*this)(i);
    return;
  }
  const PathGroupBatched<Real> batched{*this};
#pragma omp parallel for schedule(static)
  for (std::int64_t g = 0; g < n / PathGroupBatched<Real>::kBatch; ++g) batched(g);
}

}  // namespace strata::kernels::pricing
