// The host's form of PathGroupKernel (path_group.hpp) for groups of GBM,
// Heston and Merton assets on Philox draws (host only: not included from .cu
// files; the steps are asset_steps_batched.hpp).
//
// Index g covers the kBatch consecutive lanes g*kBatch.., which read
// consecutive samples: the batch simulates sample s of each of them
// together, every step in `omp simd` loops across the lanes (normals from
// rng::philox_normals_batch, libmvec's log/cos/sin), then evaluates each
// payoff on the batch's paths, and every lane adds its own values in the
// same order as in PathGroupKernel. The draws are those of PathGroupKernel
// (subsequence sample + replicate * 2^53; per step one normal per asset,
// then each asset's own; the antithetic path negates them), so the estimates
// agree with it up to libmvec's last bits; a run that qualifies computes
// every sample here (PathGroupRun picks the kernel once per run), so its
// prices are bitwise the same for any chunk or rank count.
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
#include "kernels/pricing/asset_steps_batched.hpp"
#include "kernels/pricing/path_group.hpp"
#include "kernels/rng/normal_batch.hpp"

namespace strata::kernels::pricing {

template <class Real>
struct PathGroupBatched {
  static constexpr int kBatch = 16;  // whole vectors at every width up to AVX-512 floats
  static_assert(kLanes % kBatch == 0, "a batch of lanes must not straddle two blocks");
  static_assert(kSliceSamples % kBatch == 0, "a batch of lanes must not straddle two slices");
  static constexpr unsigned kPerCall = rng::NormalsPerCall<Real>::value;

  PathGroupKernel<Real> k;  // its paths/variance hold the batches' pieces

  std::int64_t cells() const { return static_cast<std::int64_t>(k.steps + 1) * k.n_assets * kBatch; }
  template <class P>
  P* row(P* base, int copy, int step, int asset) const {
    return base + copy * cells() + (static_cast<std::int64_t>(step) * k.n_assets + asset) * kBatch;
  }

  void operator()(std::int64_t g) const {
    const std::int64_t i0 = g * kBatch;
    const SampleWindow win = slice_window(k.first_block + i0 / kLanes, k.n_samples, k.slice_begin, k.slice_end);
    const std::int64_t end = win.hi;
    const int copies = k.antithetic ? 2 : 1;
    Real* x = k.paths + g * copies * cells();
    Real* var = k.variance + g * copies * cells();
    for (int q = 0; q < k.n_payoffs * k.replicates && k.slice_begin == 0; ++q) {
      for (int m = 0; m < kMoments; ++m) {
        for (int w = 0; w < kBatch; ++w) k.lanes[(kMoments * q + m) * k.n_lanes + i0 + w] = 0.0;
      }
    }
    for (std::int64_t s = win.first(i0 % kLanes); s < end; s += kLanes) {
      const int live = end - s < kBatch ? static_cast<int>(end - s) : kBatch;
      for (int r = 0; r < k.replicates; ++r) {
        simulate(static_cast<std::uint64_t>(s) + (static_cast<std::uint64_t>(r) << 53), x, var);
        add_payoffs(x, var, i0, r, live);
      }
    }
  }

  // Both copies of the batch's paths from one set of draws, in
  // PathGroupKernel's order: per step one normal per asset, then each
  // asset's own (Heston one, Merton two), asset by asset.
  void simulate(std::uint64_t stream, Real* x, Real* var) const {
    const int copies = k.antithetic ? 2 : 1;
    const int n = k.n_assets;
    Real v[2][kMaxGroupAssets][kBatch];
    for (int c = 0; c < copies; ++c) {
      for (int a = 0; a < n; ++a) {
        Real* x0 = row(x, c, 0, a);
        const Real spot = k.assets[a].log_spot, v0 = k.assets[a].v0;
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
        rng::philox_normals_batch<Real, kBatch>(k.key, stream, call++, normals);
        used = 0;
      }
      const Real* z = normals[used++];
#pragma omp simd
      for (int w = 0; w < kBatch; ++w) out[w] = z[w];
    };
    for (int step = 0; step < k.steps; ++step) {
      for (int a = 0; a < n; ++a) draw(eps[a]);
      for (int a = 0; a < n; ++a) {
        const AssetModel model = k.assets[a].model;
        if (model != AssetModel::gbm) draw(own[a][0]);
        if (model == AssetModel::merton) draw(own[a][1]);
      }
      for (int a = 0; a < n; ++a) {
        const Real* wa = eps[a];
        if (k.correlated) {
#pragma omp simd
          for (int w = 0; w < kBatch; ++w) dw[w] = Real(0);
          for (int b = 0; b <= a; ++b) {
            const Real l = k.cholesky[a * n + b];
#pragma omp simd
            for (int w = 0; w < kBatch; ++w) dw[w] += l * eps[b][w];
          }
          wa = dw;
        }
        const AssetStep<Real>& as = k.assets[a];
        const Real dt = k.dt[step], sqrt_dt = k.sqrt_dt[step];
        for (int c = 0; c < copies; ++c) {
          const Real sign = c == 0 ? Real(1) : Real(-1);
          const Real* prev = row(x, c, step, a);
          Real* next = row(x, c, step + 1, a);
          Real* sv = row(var, c, step, a);
          if (as.model == AssetModel::heston_qe) {
            heston_qe_step_batch<kBatch>(as, dt, wa, own[a][0], sign, prev, next, v[c][a], sv);
          } else if (as.model == AssetModel::heston_full_truncation) {
            heston_ft_step_batch<kBatch>(as, dt, sqrt_dt, wa, own[a][0], sign, prev, next, v[c][a], sv);
          } else if (as.model == AssetModel::merton) {
            merton_step_batch<kBatch>(as, dt, sqrt_dt, wa, own[a][0], own[a][1], sign, prev, next, sv);
          } else {
            gbm_step_batch<kBatch>(as, dt, sqrt_dt, wa, sign, prev, next, sv);
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
        const Real* xt = row(x, c, k.steps, spec.asset);
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
          const Real* xf = row(x, c, k.fix_steps[spec.fix_begin + f], spec.asset);
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
              x + c * cells() + w, var + c * cells() + w, kBatch, k.n_assets, k.steps, k.fix_steps,
              k.weights,           k.discount_at,      k.exercise};
          out[w] = path_payoff(spec, view);
        }
    }
  }

  // A payoff on the batch's samples (the pair's mean with antithetic).
  void sample_values(const PayoffSpec<Real>& spec, const Real* x, const Real* var, double* out) const {
    payoff(spec, x, var, 0, out);
    if (!k.antithetic) return;
    double down[kBatch];
    payoff(spec, x, var, 1, down);
#pragma omp simd
    for (int w = 0; w < kBatch; ++w) out[w] = 0.5 * (out[w] + down[w]);
  }

  // PathGroupKernel::operator()'s sums, for the batch's live lanes.
  void add_payoffs(const Real* x, const Real* var, std::int64_t i0, int r, int live) const {
    double value[kBatch], control[kBatch];
    for (int p = 0; p < k.n_payoffs; ++p) {
      sample_values(k.payoffs[p], x, var, value);
      if (k.beta != nullptr && k.beta[p] != 0.0) {
        sample_values(k.controls[p], x, var, control);
        const double beta = k.beta[p], mean = k.control_mean[p];
#pragma omp simd
        for (int w = 0; w < kBatch; ++w) value[w] -= beta * (control[w] - mean);
      }
      const std::int64_t q = p * k.replicates + r;
      double* s1 = k.lanes + (kMoments * q) * k.n_lanes + i0;
      double* s2 = k.lanes + (kMoments * q + 1) * k.n_lanes + i0;
      for (int w = 0; w < live; ++w) {
        const double d = value[w] - k.shifts[p];
        s1[w] += d;
        s2[w] += d * d;
      }
    }
  }
};

}  // namespace strata::kernels::pricing
