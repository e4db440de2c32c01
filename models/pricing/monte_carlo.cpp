#include "models/pricing/monte_carlo.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>

#include "engine/backend/buffer.hpp"
#include "engine/backend/parallel.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/progress.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "kernels/pricing/european.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "models/pricing/control_variates.hpp"
#include "models/pricing/longstaff_schwartz.hpp"
#include "models/pricing/path_group_run.hpp"

namespace strata::pricing {

using kernels::pricing::EuropeanGbm;
using kernels::pricing::kLanes;
using kernels::pricing::kMoments;
using kernels::pricing::kSamplesPerBlock;
using kernels::pricing::LaneMoments;
using kernels::pricing::LaneMomentsBatched;
using kernels::pricing::LaneTree;

// A tree node in a checkpoint: level, index, kMoments sums.
constexpr int kNodeWidth = kMoments + 2;

SamplePlan plan_samples(const Portfolio& p, const Device& device, const MpiContext& mpi) {
  SamplePlan plan;
  // Sobol': a sample is one point, simulated once per replicate.
  plan.samples = (p.antithetic ? (p.paths + 1) / 2 : p.paths) / p.replicates;
  plan.paths_per_sample = (p.antithetic ? 2 : 1) * p.replicates;
  plan.paths = plan.paths_per_sample * plan.samples;
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
  // Path groups run one after the other, each in launches that fit its
  // budget: the largest one adds its working memory (planned for fp64, the
  // larger).
  std::size_t groups = 0;
  for (const PathGroup& g : path_groups(p)) {
    const int greeks = static_cast<int>(plan_greeks(p, g).slots.size());
    const std::int64_t nb =
        PathGroupRun::launch_blocks(g, p.antithetic, Precision::fp64, p.replicates, device, plan.chunk_blocks, greeks);
    groups = std::max(groups, static_cast<std::size_t>(nb) *
                                  PathGroupRun::bytes_per_block(g, p.antithetic, Precision::fp64, p.replicates, greeks));
  }
  plan.device_bytes += groups;
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

Estimate estimate_from_replicates(double shift, const std::vector<double>& sums, std::int64_t samples,
                                  std::int64_t paths) {
  const auto r = static_cast<double>(sums.size());
  Estimate e;
  e.paths = paths;
  double mean = 0.0;
  for (double s : sums) {
    e.replicate_prices.push_back(shift + s / static_cast<double>(samples));
    mean += s / static_cast<double>(samples);
  }
  mean /= r;
  double ss = 0.0;
  for (double s : sums) ss += (s / static_cast<double>(samples) - mean) * (s / static_cast<double>(samples) - mean);
  e.price = shift + mean;
  e.standard_error = std::sqrt(ss / (r - 1.0) / r);
  // The replicate means are independent and, by the central limit theorem
  // over the points, close to normal: Student's t with r - 1 degrees of
  // freedom (Owen, Monte Carlo theory, methods and examples, ch. 17).
  const double t = boost::math::quantile(boost::math::students_t(r - 1.0), 0.975);
  e.ci95_low = e.price - t * e.standard_error;
  e.ci95_high = e.price + t * e.standard_error;
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

}  // namespace

PortfolioRun::PortfolioRun(const Portfolio& p, const SamplePlan& plan, const Device& device, Precision precision,
                           const MpiContext& mpi)
    : p_(p), plan_(plan), device_(device), precision_(precision), mpi_(mpi) {
  shifts_.assign(p.instruments.size(), 0.0);
  control_beta_.assign(p.instruments.size(), std::numeric_limits<double>::quiet_NaN());
  terminal_ = lone_europeans(p);
  for (std::size_t i : terminal_) shifts_[i] = shift_for(p, p.instruments[i]);
  groups_ = path_groups(p);
  // The Americans' exercise policies, fitted on their own paths (collective).
  exercise_.resize(p.instruments.size());
  std::vector<std::vector<double>> tables;
  for (const PathGroup& g : groups_) {
    tables.push_back(fit_exercise(p, g, device, precision, mpi));
    const std::vector<int> offsets = exercise_offsets(p, g);
    for (std::size_t j = 0; j < g.instruments.size(); ++j) {
      if (offsets[j] < 0) continue;
      const Instrument& in = p.instruments[g.instruments[j]];
      const auto begin = tables.back().begin() + offsets[j];
      exercise_[g.instruments[j]].assign(begin, begin + in.fixings * (in.degree + 1));
    }
  }
  chunk_moments_.resize(static_cast<std::size_t>(plan.chunk_blocks * kMoments));
  // Any rank's allocation failure becomes every rank's.
  mpi.collective([&] {
    if (!terminal_.empty()) {
      lanes_ = Buffer<double>(device, static_cast<std::size_t>(plan.chunk_blocks * kLanes * kMoments));
      blocks_ = Buffer<double>(device, static_cast<std::size_t>(plan.chunk_blocks * kMoments));
    }
    std::size_t work = 0, lanes = 0, blocks = 0;
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      const PathGroup& g = groups_[gi];
      const int greeks = static_cast<int>(plan_greeks(p, g).slots.size());
      const std::int64_t nb =
          PathGroupRun::launch_blocks(g, p.antithetic, precision, p.replicates, device, plan.chunk_blocks, greeks);
      // The pilot runs alike on every rank: the same betas everywhere.
      const std::vector<double> betas = p.control_variate ? control_betas(p, g, device, precision) : std::vector<double>{};
      group_runs_.emplace_back(p, g, device, precision, nb, betas, false, tables[gi]);
      const PathGroupRun& run = group_runs_.back();
      for (std::size_t j = 0; j < g.instruments.size(); ++j) {
        shifts_[g.instruments[j]] = run.shifts()[j];
        if (run.controlled()[j]) control_beta_[g.instruments[j]] = betas[j];
      }
      // Greek slots after the instruments', group by group.
      greek_offset_.push_back(greeks_.size());
      for (std::size_t k = 0; k < run.greek_slots().size(); ++k) {
        const GreekSlot& s = run.greek_slots()[k];
        greeks_.push_back({g.instruments[s.instrument], s.name, s.element, {}});
        greek_shifts_.push_back(run.shifts()[g.instruments.size() + k]);
      }
      work = std::max(work, run.work_doubles());
      lanes = std::max(lanes, run.lane_doubles());
      blocks = std::max(blocks, run.block_doubles());
    }
    // One scratch for all groups: memory is the largest group's launch.
    scratch_.work = Buffer<double>(device, work);
    scratch_.lanes = Buffer<double>(device, lanes);
    scratch_.blocks = Buffer<double>(device, blocks);
  });
  reset_ranges({{plan.first_block, plan.last_block}}, 0);
}

void PortfolioRun::reset_ranges(std::vector<BlockRange> ranges, std::int64_t steps_done) {
  ranges_ = std::move(ranges);
  range_ = 0;
  offset_ = 0;
  my_blocks_ = 0;
  for (const BlockRange& r : ranges_) my_blocks_ += r.size();
  // One tree per slot and replicate (slot * replicates + r); the slots are
  // the instruments, then the Greeks.
  sums_.assign((p_.instruments.size() + greeks_.size()) * static_cast<std::size_t>(p_.replicates),
               TreeSum(plan_.blocks, ranges_, kMoments));
  // Steps are global: the rank with the most chunks sets the count.
  const double mine = static_cast<double>((my_blocks_ + plan_.chunk_blocks - 1) / plan_.chunk_blocks);
  steps_done_ = steps_done;
  steps_ = steps_done + static_cast<std::int64_t>(mpi_.max(mine));
}

template <class Real>
void PortfolioRun::compute_piece(std::int64_t first, std::int64_t nb) {
  for (std::size_t i : terminal_) {
    const EuropeanGbm<Real> sampler = sampler_for<Real>(p_, p_.instruments[i]);
    if (device_.backend == Backend::host) {
      // Vectorised across lanes (host only: no CUDA instantiation needed).
      using Batched = LaneMomentsBatched<EuropeanGbm<Real>>;
      host::parallel_for(nb * kLanes / Batched::kBatch,
                         Batched{sampler, first, plan_.samples, shifts_[i], lanes_.data()});
    } else {
      parallel_for(device_, nb * kLanes,
                   LaneMoments<EuropeanGbm<Real>>{sampler, first, plan_.samples, shifts_[i], lanes_.data()});
    }
    parallel_for(device_, nb, LaneTree{lanes_.data(), blocks_.data()});
    // The only transfer of the chunk: kMoments doubles per block.
    blocks_.copy_to_host(chunk_moments_.data(), static_cast<std::size_t>(nb * kMoments));
    scan(i, chunk_moments_.data(), first, nb);
    sums_[i].add(chunk_moments_.data(), nb);
  }
  // Every instrument of a group from the same paths.
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    group_runs_[g].compute(first, nb, plan_.samples, scratch_, group_moments_);
    const auto reps = static_cast<std::size_t>(p_.replicates);
    for (std::size_t j = 0; j < groups_[g].instruments.size(); ++j) {
      for (std::size_t r = 0; r < reps; ++r) {
        const double* m = group_moments_.data() + static_cast<std::ptrdiff_t>(j * reps + r) * nb * kMoments;
        scan(groups_[g].instruments[j], m, first, nb);
        sums_[groups_[g].instruments[j] * reps + r].add(m, nb);
      }
    }
    const std::size_t n = groups_[g].instruments.size();
    for (std::size_t k = 0; k < group_runs_[g].greek_slots().size(); ++k) {
      const std::size_t slot = p_.instruments.size() + greek_offset_[g] + k;
      for (std::size_t r = 0; r < reps; ++r) {
        const double* m = group_moments_.data() + static_cast<std::ptrdiff_t>((n + k) * reps + r) * nb * kMoments;
        scan(greeks_[greek_offset_[g] + k].instrument, m, first, nb);
        sums_[slot * reps + r].add(m, nb);
      }
    }
  }
}

void PortfolioRun::scan(std::size_t instrument, const double* moments, std::int64_t first, std::int64_t nb) {
  if (first_bad_) return;
  for (std::int64_t k = 0; k < nb * kMoments; ++k) {
    if (!std::isfinite(moments[k])) {
      first_bad_ = "non-finite payoff sums of instrument " + p_.instruments[instrument].name + " in block " +
                   std::to_string(first + k / kMoments) + " (a payoff or the underlying overflowed?)";
      return;
    }
  }
}

void PortfolioRun::inject_nonfinite() {
  // Through the same scan as real data, so the test covers the detection.
  std::int64_t first = ranges_.empty() ? 0 : ranges_.front().first;
  chunk_moments_[0] = std::numeric_limits<double>::quiet_NaN();
  scan(0, chunk_moments_.data(), first, 1);
}

void PortfolioRun::advance() {
  if (steps_done_ >= steps_) return;
  std::int64_t left = plan_.chunk_blocks;
  while (left > 0 && range_ < ranges_.size()) {
    const BlockRange& r = ranges_[range_];
    const std::int64_t nb = std::min(left, r.size() - offset_);
    if (nb > 0) {
      if (precision_ == Precision::fp32) {
        compute_piece<float>(r.first + offset_, nb);
      } else {
        compute_piece<double>(r.first + offset_, nb);
      }
    }
    offset_ += nb;
    left -= nb;
    blocks_computed_ += nb;
    if (offset_ >= r.size()) {
      ++range_;
      offset_ = 0;
    }
  }
  ++steps_done_;
}

double PortfolioRun::paths_done() const {
  const double share = my_blocks_ > 0 ? static_cast<double>(blocks_computed_) / static_cast<double>(my_blocks_) : 1.0;
  const double blocks = static_cast<double>(restored_blocks_) +
                        std::min(1.0, share) * static_cast<double>(plan_.blocks - restored_blocks_);
  return static_cast<double>(plan_.paths) * blocks / static_cast<double>(std::max<std::int64_t>(1, plan_.blocks));
}

Estimate PortfolioRun::slot_estimate(std::size_t slot, double shift) {
  const auto reps = static_cast<std::size_t>(p_.replicates);
  std::vector<double> replicate_sums;
  std::vector<double> total;
  for (std::size_t r = 0; r < reps; ++r) {
    total = sums_[slot * reps + r].finish(mpi_);
    replicate_sums.push_back(total[0]);
  }
  return p_.sobol ? estimate_from_replicates(shift, replicate_sums, plan_.samples, plan_.paths)
                  : estimate_from_moments(shift, total[0], total[1], plan_.samples, plan_.paths);
}

std::vector<Estimate> PortfolioRun::finish() {
  std::vector<Estimate> out;
  for (std::size_t i = 0; i < p_.instruments.size(); ++i) {
    out.push_back(slot_estimate(i, shifts_[i]));
    out.back().control_beta = control_beta_[i];
    out.back().exercise_coefficients = exercise_[i];
  }
  for (std::size_t k = 0; k < greeks_.size(); ++k) {
    greeks_[k].estimate = slot_estimate(p_.instruments.size() + k, greek_shifts_[k]);
  }
  return out;
}

void PortfolioRun::save(StateWriter& w) const {
  w.scalar("steps_done", steps_done_);
  w.scalar("samples", plan_.samples);
  w.scalar("blocks", plan_.blocks);
  w.scalar("instruments", static_cast<std::int64_t>(sums_.size()));
  for (std::size_t i = 0; i < sums_.size(); ++i) w.records("nodes_" + std::to_string(i), sums_[i].nodes(), kNodeWidth);
}

void PortfolioRun::restore(StateReader& r) {
  const std::int64_t old_samples = r.integer("samples");
  const std::int64_t steps_done = r.integer("steps_done");
  if (r.integer("instruments") != static_cast<std::int64_t>(sums_.size())) {
    throw Error(ExitCode::bad_input, "the checkpoint holds another number of instruments");
  }
  // A node survives a change of `paths` only when all its blocks are full
  // in both runs (a short last block, or a node cut by the old end, sums
  // other samples than the new tree would).
  const std::int64_t full_old = old_samples / kSamplesPerBlock, full_new = plan_.samples / kSamplesPerBlock;
  const bool same = old_samples == plan_.samples;
  std::vector<std::vector<double>> kept(sums_.size());
  std::vector<std::pair<std::int64_t, std::int64_t>> covered;   // [lo, hi) of instrument 0's nodes
  for (std::size_t i = 0; i < sums_.size(); ++i) {
    const std::vector<double> records = r.records("nodes_" + std::to_string(i), kNodeWidth);
    std::vector<std::pair<std::int64_t, std::int64_t>> mine;
    for (std::size_t k = 0; k < records.size(); k += kNodeWidth) {
      const int level = static_cast<int>(records[k]);
      const auto j = static_cast<std::int64_t>(records[k + 1]);
      const std::int64_t lo = j << level, full_hi = (j + 1) << level;
      const std::int64_t hi = std::min(full_hi, same ? plan_.blocks : full_hi);
      if (!same && (full_hi > full_old || full_hi > full_new)) continue;
      if (lo >= plan_.blocks) continue;
      mine.emplace_back(lo, hi);
      kept[i].insert(kept[i].end(), records.begin() + static_cast<std::ptrdiff_t>(k),
                     records.begin() + static_cast<std::ptrdiff_t>(k + kNodeWidth));
    }
    std::sort(mine.begin(), mine.end());
    if (i == 0) {
      covered = mine;
    } else if (mine != covered) {
      throw Error(ExitCode::bad_input, "the checkpoint's instruments cover different blocks (damaged?)");
    }
  }
  // What is left, dealt out evenly over this run's ranks.
  std::vector<BlockRange> left;
  std::int64_t at = 0, restored = 0;
  for (const auto& [lo, hi] : covered) {
    if (lo < at) throw Error(ExitCode::bad_input, "the checkpoint's tree nodes overlap (damaged?)");
    if (lo > at) left.push_back({at, lo});
    restored += hi - lo;
    at = hi;
  }
  if (at < plan_.blocks) left.push_back({at, plan_.blocks});
  const BlockRange share = block_range(plan_.blocks - restored, mpi_.rank(), mpi_.size());
  std::vector<BlockRange> mine;
  std::int64_t seen = 0;
  for (const BlockRange& b : left) {
    const std::int64_t lo = std::max(b.first, b.first + (share.first - seen));
    const std::int64_t hi = std::min(b.last, b.first + (share.last - seen));
    if (lo < hi) mine.push_back({lo, hi});
    seen += b.size();
  }
  reset_ranges(mine, steps_done);
  restored_blocks_ = restored;
  blocks_computed_ = 0;
  if (mpi_.root()) {
    for (std::size_t i = 0; i < sums_.size(); ++i) sums_[i].add_known(kept[i]);
  }
}

std::vector<Estimate> price_portfolio(const Portfolio& p, const SamplePlan& plan, const Device& device,
                                      Precision precision, const MpiContext& mpi, Progress* progress) {
  PortfolioRun run(p, plan, device, precision, mpi);
  mpi.collective([&] {
    while (run.steps_done() < run.steps()) {
      run.advance();
      if (progress != nullptr) progress->update(run.paths_done());
    }
  });
  return run.finish();
}

}  // namespace strata::pricing
