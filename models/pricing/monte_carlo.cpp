#include "models/pricing/monte_carlo.hpp"

#include <algorithm>
#include <cmath>

#include "engine/backend/buffer.hpp"
#include "engine/backend/parallel.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/progress.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "kernels/pricing/european.hpp"
#include "kernels/pricing/sample_blocks.hpp"

namespace strata::pricing {

using kernels::pricing::EuropeanGbm;
using kernels::pricing::kLanes;
using kernels::pricing::kMoments;
using kernels::pricing::kSamplesPerBlock;
using kernels::pricing::LaneMoments;
using kernels::pricing::LaneTree;

SamplePlan plan_samples(const Portfolio& p, const Device& device, const MpiContext& mpi) {
  SamplePlan plan;
  plan.samples = p.antithetic ? (p.paths + 1) / 2 : p.paths;
  plan.paths = p.antithetic ? 2 * plan.samples : plan.samples;
  plan.blocks = (plan.samples + kSamplesPerBlock - 1) / kSamplesPerBlock;
  const BlockRange r = block_range(plan.blocks, mpi.rank(), mpi.size());
  plan.first_block = r.first;
  plan.last_block = r.last;

  // A chunk is what one launch computes. The GPU wants ~1M lanes in flight;
  // the host wants chunks small enough for a lively progress line.
  std::int64_t chunk_samples = p.chunk_paths;
  if (chunk_samples == 0) chunk_samples = device.backend == Backend::cuda ? (std::int64_t{1} << 28) : (std::int64_t{1} << 22);
  if (p.antithetic) chunk_samples = std::max<std::int64_t>(1, chunk_samples / 2);
  plan.chunk_blocks = std::clamp<std::int64_t>(chunk_samples / kSamplesPerBlock, 1, std::max<std::int64_t>(1, r.size()));
  plan.device_bytes = static_cast<std::size_t>(plan.chunk_blocks) * (kLanes + 1) * kMoments * sizeof(double);
  return plan;
}

Estimate estimate_from_moments(double shift, double sum, double sum_sq, std::int64_t samples, std::int64_t paths) {
  const double n = static_cast<double>(samples);
  Estimate e;
  e.paths = paths;
  e.price = shift + sum / n;
  // Unbiased sample variance of one sample, then of the mean.
  const double var = samples > 1 ? std::max(0.0, (sum_sq - sum * sum / n) / (n - 1.0)) : 0.0;
  e.standard_error = std::sqrt(var / n);
  constexpr double z95 = 1.959963984540054;   // Phi^{-1}(0.975)
  e.ci95_low = e.price - z95 * e.standard_error;
  e.ci95_high = e.price + z95 * e.standard_error;
  return e;
}

namespace {

template <class Real>
EuropeanGbm<Real> sampler_for(const Portfolio& p, const Instrument& in) {
  const Asset& a = p.assets[static_cast<std::size_t>(in.asset)];
  EuropeanGbm<Real> g{};
  g.key = rng::philox_key(p.seed);
  g.asset = static_cast<std::uint32_t>(in.asset);
  g.call = in.call;
  g.antithetic = p.antithetic;
  g.spot = static_cast<Real>(a.spot);
  g.strike = static_cast<Real>(in.strike);
  g.drift = static_cast<Real>((p.rate - a.dividend - 0.5 * a.vol * a.vol) * in.maturity);
  g.diffusion = static_cast<Real>(a.vol * std::sqrt(in.maturity));
  g.discount = std::exp(-p.rate * in.maturity);
  return g;
}

// Discounted payoff of the median path (Z = 0), computed in double on the
// host so every backend and precision shifts by the same value.
double shift_for(const Portfolio& p, const Instrument& in) {
  const Asset& a = p.assets[static_cast<std::size_t>(in.asset)];
  const double st = a.spot * std::exp((p.rate - a.dividend - 0.5 * a.vol * a.vol) * in.maturity);
  const double intrinsic = in.call ? st - in.strike : in.strike - st;
  return std::exp(-p.rate * in.maturity) * std::max(intrinsic, 0.0);
}

template <class Real>
std::vector<Estimate> price_all(const Portfolio& p, const SamplePlan& plan, const Device& device,
                                const MpiContext& mpi, Progress* progress) {
  const std::size_t n_inst = p.instruments.size();
  const std::int64_t local_blocks = plan.last_block - plan.first_block;
  // Block moments are folded into the reduction tree as they arrive, so the
  // host holds O(log blocks) numbers per instrument, whatever `paths` is.
  std::vector<TreeSum> sums(n_inst, TreeSum(plan.blocks, {plan.first_block, plan.last_block}, kMoments));
  std::vector<double> chunk_moments(static_cast<std::size_t>(plan.chunk_blocks * kMoments));
  std::vector<double> shifts(n_inst);
  for (std::size_t i = 0; i < n_inst; ++i) shifts[i] = shift_for(p, p.instruments[i]);

  // Any rank's failure (device memory, a launch error) becomes every rank's,
  // so no rank is left waiting in the reduction below.
  mpi.collective([&] {
    Buffer<double> lanes(device, static_cast<std::size_t>(plan.chunk_blocks * kLanes * kMoments));
    Buffer<double> blocks(device, static_cast<std::size_t>(plan.chunk_blocks * kMoments));
    for (std::int64_t first = plan.first_block; first < plan.last_block; first += plan.chunk_blocks) {
      const std::int64_t nb = std::min(plan.chunk_blocks, plan.last_block - first);
      for (std::size_t i = 0; i < n_inst; ++i) {
        const LaneMoments<EuropeanGbm<Real>> lane_fn{sampler_for<Real>(p, p.instruments[i]), first, plan.samples,
                                                     shifts[i], lanes.data()};
        parallel_for(device, nb * kLanes, lane_fn);
        parallel_for(device, nb, LaneTree{lanes.data(), blocks.data()});
        // The only transfer of the chunk: kMoments doubles per block.
        blocks.copy_to_host(chunk_moments.data(), static_cast<std::size_t>(nb * kMoments));
        sums[i].add(chunk_moments.data(), nb);
      }
      if (progress != nullptr) {
        const double share = static_cast<double>(first + nb - plan.first_block) / static_cast<double>(local_blocks);
        progress->update(share * static_cast<double>(plan.paths));
      }
    }
  });

  std::vector<Estimate> out;
  for (std::size_t i = 0; i < n_inst; ++i) {
    const std::vector<double> total = sums[i].finish(mpi);
    out.push_back(estimate_from_moments(shifts[i], total[0], total[1], plan.samples, plan.paths));
  }
  return out;
}

}  // namespace

std::vector<Estimate> price_portfolio(const Portfolio& p, const SamplePlan& plan, const Device& device,
                                      Precision precision, const MpiContext& mpi, Progress* progress) {
  if (precision == Precision::fp32) return price_all<float>(p, plan, device, mpi, progress);
  return price_all<double>(p, plan, device, mpi, progress);
}

}  // namespace strata::pricing
