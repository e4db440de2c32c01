#include "models/pricing/monte_carlo.hpp"

#include <algorithm>
#include <chrono>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>

#include "engine/backend/buffer.hpp"
#include "models/pricing/kernels.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/timers.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "kernels/pricing/european.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "models/pricing/control_variates.hpp"
#include "models/pricing/longstaff_schwartz.hpp"
#include "models/pricing/path_group_run.hpp"

namespace strata::pricing {

using namespace kernels::pricing;

// A tree node in a checkpoint: level, index, kMoments sums.
constexpr int kNodeWidth = kMoments + 2;

SamplePlan plan_samples(const Portfolio& p, const Device& device, const MpiContext& mpi) {
  SamplePlan plan;
  // Sobol': a sample is one point, simulated once per replicate.
  plan.samples = p.samples();
  plan.paths_per_sample = (p.antithetic ? 2 : 1) * p.replicates;
  plan.paths = plan.paths_per_sample * plan.samples;
  plan.blocks = (plan.samples + kSamplesPerBlock - 1) / kSamplesPerBlock;
  const BlockRange r = block_range(plan.blocks, mpi.rank(), mpi.size());
  plan.first_block = r.first;
  plan.last_block = r.last;

  // A chunk is what one launch computes; its size by default is the backend's.
  std::int64_t chunk_samples = p.chunk_paths;
  if (chunk_samples == 0) chunk_samples = device.chunk_items();
  if (p.antithetic) chunk_samples = std::max<std::int64_t>(1, chunk_samples / 2);
  plan.chunk_blocks = std::clamp<std::int64_t>(chunk_samples / kSamplesPerBlock, 1, std::max<std::int64_t>(1, r.size()));
  plan.device_bytes = static_cast<std::size_t>(plan.chunk_blocks) * (kLanes + 1) * kMoments * sizeof(double);
  // Path groups run one after the other, each in launches that fit its
  // budget: the largest one adds its working memory (planned for fp64, the
  // larger).
  std::size_t groups = 0;
  for (const PathGroup& g : path_groups(p)) {
    const std::int64_t nb = PathGroupRun::launch_blocks(p, g, Precision::fp64, device, plan.chunk_blocks);
    groups = std::max(groups, PathGroupRun::launch_bytes(p, g, Precision::fp64, device, nb));
  }
  plan.device_bytes += groups;
  return plan;
}

namespace {

// Moments (sum, sum of squares of x - shift) over n samples -> estimate.
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

// Sobol': the mean of the replicates' means (sums: each replicate's sum of
// x - shift over `samples` points), the standard error from their spread,
// the 95% interval from Student's t.
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

template <class Real>
EuropeanGbm<Real> sampler_for(const Portfolio& p, const Instrument& in) {
  const Asset& a = p.assets[static_cast<std::size_t>(in.asset)];
  return {.key = rng::philox_key(p.seed), .asset = static_cast<std::uint32_t>(in.asset), .call = in.call,
          .antithetic = p.antithetic, .spot = static_cast<Real>(a.spot), .strike = static_cast<Real>(in.strike),
          .drift = static_cast<Real>((p.rate - a.dividend - 0.5 * a.vol * a.vol) * in.maturity),
          .diffusion = static_cast<Real>(a.vol * std::sqrt(in.maturity)), .discount = std::exp(-p.rate * in.maturity)};
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
                           const MpiContext& mpi, Timers* timers)
    : p_(p), plan_(plan), device_(device), precision_(precision), mpi_(mpi), timers_(timers) {
  shifts_.assign(p.instruments.size(), 0.0);
  control_beta_.assign(p.instruments.size(), std::numeric_limits<double>::quiet_NaN());
  terminal_ = lone_europeans(p);
  for (std::size_t i : terminal_) shifts_[i] = shift_for(p, p.instruments[i]);
  groups_ = path_groups(p);
  tables_.resize(groups_.size());
  exercise_.resize(p.instruments.size());
  timed_ = p.chunk_paths == 0;
  step_slices_ = timed_ ? first_step_slices() : plan.chunk_blocks * kSlicesPerBlock;
  // The Greek slots and a begun block's lane layout: known before any
  // group runs (the regression passes come first).
  const auto reps = static_cast<std::size_t>(p.replicates);
  for (std::size_t k = 0; k < terminal_.size(); ++k) {
    lane_offset_.push_back(lane_width_);
    lane_width_ += static_cast<std::size_t>(kLanes * kMoments);
  }
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    const PathGroup& g = groups_[gi];
    const GreekPlan gp = plan_greeks(p, g, precision_);
    greek_offset_.push_back(greeks_.size());
    for (const GreekSlot& s : gp.slots) greeks_.push_back({g.instruments[s.instrument], s.name, s.element, {}, s.method});
    lane_offset_.push_back(lane_width_);
    lane_width_ += (g.instruments.size() + gp.slots.size()) * reps * static_cast<std::size_t>(kLanes * kMoments);
    if (exercise_offsets(p, g).back() > 0) regressions_.push_back(gi);
    // Each scenario passes over every step of every asset of the path again
    // (a re-simulation, or a spot bump's shift and revaluation).
    pass_cost_.push_back(static_cast<double>(g.grid.size() * g.assets.size()));
    pricing_cost_ += static_cast<double>(1 + gp.scenarios.size()) * pass_cost_.back();
  }
  if (!terminal_.empty()) pricing_cost_ += 1.0;  // one draw at maturity
  chunk_moments_.resize(static_cast<std::size_t>(plan.chunk_blocks * kMoments));
  reset_ranges({{plan.first_block, plan.last_block}}, 0);
  // The Americans' exercise policies first, fitted on their own paths.
  if (!regressions_.empty()) {
    pass_ = std::make_unique<RegressionPass>(p, groups_[regressions_.front()], device, precision, mpi);
  } else {
    prepare_pricing();
  }
  settle();
  update_steps();
}

PortfolioRun::~PortfolioRun() = default;

void PortfolioRun::prepare_pricing() {
  const Portfolio& p = p_;
  // Any rank's allocation failure becomes every rank's.
  mpi_.collective([&] {
    if (!terminal_.empty()) {
      lanes_ = Buffer<double>(device_, static_cast<std::size_t>(plan_.chunk_blocks * kLanes * kMoments));
      blocks_ = Buffer<double>(device_, static_cast<std::size_t>(plan_.chunk_blocks * kMoments));
    }
    std::size_t work = 0, lanes = 0, blocks = 0;
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      const PathGroup& g = groups_[gi];
      const std::int64_t nb = PathGroupRun::launch_blocks(p, g, precision_, device_, plan_.chunk_blocks);
      // The pilot runs alike on every rank: the same betas everywhere.
      const std::vector<double> betas =
          p.control_variate ? control_betas(p, g, device_, precision_) : std::vector<double>{};
      group_runs_.emplace_back(p, g, device_, precision_, nb, betas, false, tables_[gi]);
      const PathGroupRun& run = group_runs_.back();
      for (std::size_t j = 0; j < g.instruments.size(); ++j) {
        shifts_[g.instruments[j]] = run.shifts()[j];
        if (run.controlled()[j]) control_beta_[g.instruments[j]] = betas[j];
      }
      // Greek slots after the instruments', group by group.
      for (std::size_t k = 0; k < run.greek_slots().size(); ++k) {
        greek_shifts_.push_back(run.shifts()[g.instruments.size() + k]);
      }
      work = std::max(work, run.work_doubles());
      lanes = std::max(lanes, run.lane_doubles());
      blocks = std::max(blocks, run.block_doubles());
    }
    // One scratch for all groups: memory is the largest group's launch.
    scratch_.work = Buffer<double>(device_, work);
    scratch_.lanes = Buffer<double>(device_, lanes);
    scratch_.blocks = Buffer<double>(device_, blocks);
  });
}

void PortfolioRun::finish_regression() {
  const std::size_t gi = regressions_[regression_];
  const PathGroup& g = groups_[gi];
  {
    // The fit is host work between two device passes (docs/gpu.md).
    std::optional<Timers::Scope> scope;
    if (timers_ != nullptr) scope.emplace(*timers_, "regression_fit");
    tables_[gi] = pass_->fit(mpi_);
  }
  regression_done_ += static_cast<double>(pass_->samples());
  regression_work_done_ += static_cast<double>(pass_->samples()) * pass_cost_[gi];
  pass_done_ = 0;
  const std::vector<int> offsets = exercise_offsets(p_, g);
  for (std::size_t j = 0; j < g.instruments.size(); ++j) {
    if (offsets[j] < 0) continue;
    const Instrument& in = p_.instruments[g.instruments[j]];
    const auto begin = tables_[gi].begin() + offsets[j];
    exercise_[g.instruments[j]].assign(begin, begin + in.fixings * (in.degree + 1));
  }
  pass_.reset();
  if (++regression_ < regressions_.size()) {
    pass_ = std::make_unique<RegressionPass>(p_, groups_[regressions_[regression_]], device_, precision_, mpi_);
  } else {
    prepare_pricing();
  }
}

void PortfolioRun::settle() {
  while (pass_ && mpi_.max(static_cast<double>(pass_->slices_left())) == 0.0) finish_regression();
}

// A phase's first step: on the host one slice, whose measured time sizes
// the next step. On a GPU whole blocks for every thread it holds (kLanes
// threads a block): a smaller launch costs the same launch and wait and
// leaves the device idle, and the doubling from one slice took 20 steps,
// each with its waits and all-reduces, to fill an H200. That first launch
// is a few milliseconds of an H200 for a European, under a second for a
// 252-step Heston path: the signal latency stays bounded by work.
std::int64_t PortfolioRun::first_step_slices() const {
  if (!device_.gpu_launches()) return 1;
  const std::int64_t blocks = (device_.resident_threads + kLanes - 1) / kLanes;
  return std::max<std::int64_t>(1, std::min(blocks, plan_.chunk_blocks)) * kSlicesPerBlock;
}

int PortfolioRun::slices_in(std::int64_t block) const {
  const std::int64_t n = std::min(kSamplesPerBlock, plan_.samples - block * kSamplesPerBlock);
  return static_cast<int>((n + kernels::pricing::kSliceSamples - 1) / kernels::pricing::kSliceSamples);
}

std::int64_t PortfolioRun::slices_left() const {
  std::int64_t blocks = 0;
  for (std::size_t k = range_; k < ranges_.size(); ++k) blocks += ranges_[k].size();
  return blocks * kSlicesPerBlock - (blocks > 0 ? offset_ * kSlicesPerBlock + slice_ : 0);
}

std::int64_t PortfolioRun::work_left() const {
  std::int64_t left = slices_left() + (pass_ ? pass_->slices_left() : 0);
  for (std::size_t k = regression_ + 1; k < regressions_.size(); ++k) {
    const std::int64_t blocks = (p_.regression_paths + kSamplesPerBlock - 1) / kSamplesPerBlock;
    left += block_range(blocks, mpi_.rank(), mpi_.size()).size() * kSlicesPerBlock;
  }
  return left;
}

void PortfolioRun::update_steps() { set_steps(mpi_.max(static_cast<double>(work_left()))); }

void PortfolioRun::set_steps(double most_left) {
  const auto most = static_cast<std::int64_t>(most_left);
  steps_ = steps_done_ + (most + step_slices_ - 1) / step_slices_;
}

void PortfolioRun::reset_ranges(std::vector<BlockRange> ranges, std::int64_t steps_done) {
  ranges_ = std::move(ranges);
  range_ = 0;
  offset_ = 0;
  slice_ = 0;
  // One tree per slot and replicate (slot * replicates + r); the slots are
  // the instruments, then the Greeks.
  sums_.assign((p_.instruments.size() + greeks_.size()) * static_cast<std::size_t>(p_.replicates),
               TreeSum(plan_.blocks, ranges_, kMoments));
  steps_done_ = steps_done;
}

// Slices [begin, end) of blocks [first, first + nb): whole blocks, or one
// block cut into slices, whose lane moments wait in begun_ between calls.
template <class Real>
void PortfolioRun::compute_blocks(std::int64_t first, std::int64_t nb, int begin, int end) {
  const bool cut = begin > 0 || end < kSlicesPerBlock;
  Begun* state = cut ? &begun_[first] : nullptr;
  if (cut && state->lanes.empty()) state->lanes.assign(lane_width_, 0.0);
  const bool last = !cut || end == slices_in(first);
  constexpr auto lane_doubles = static_cast<std::size_t>(kLanes * kMoments);
  for (std::size_t t = 0; t < terminal_.size(); ++t) {
    const std::size_t i = terminal_[t];
    double* lanes = cut ? state->lanes.data() + lane_offset_[t] : nullptr;
    if (begin > 0) lanes_.copy_from_host(lanes, lane_doubles);
    const EuropeanGbm<Real> sampler = sampler_for<Real>(p_, p_.instruments[i]);
    parallel_for(device_, nb * kLanes,
                 LaneMomentsBatched<EuropeanGbm<Real>>{
                     {sampler, first, plan_.samples, shifts_[i], lanes_.data(), begin, end}});
    if (last) {
      fold_terminal(i, first, nb);
    } else {
      lanes_.copy_to_host(lanes, lane_doubles);
    }
  }
  // Every instrument of a group from the same paths.
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    double* lanes = cut ? state->lanes.data() + lane_offset_[terminal_.size() + g] : nullptr;
    group_runs_[g].compute(first, nb, plan_.samples, scratch_, group_moments_, GroupSlices{begin, end, lanes, last});
    if (last) fold_group(g, first, nb);
  }
  if (!cut) return;
  state->slices = end;
  if (last) begun_.erase(first);
}

void PortfolioRun::fold_terminal(std::size_t i, std::int64_t first, std::int64_t nb) {
  parallel_for(device_, nb, LaneTree{lanes_.data(), blocks_.data()});
  // The only transfer of the chunk: kMoments doubles per block.
  blocks_.copy_to_host(chunk_moments_.data(), static_cast<std::size_t>(nb * kMoments));
  scan(i, chunk_moments_.data(), first, nb);
  sums_[i].add(chunk_moments_.data(), nb);
}

void PortfolioRun::fold_group(std::size_t g, std::int64_t first, std::int64_t nb) {
  // The group's slots: its instruments, then its Greeks (after every instrument's in sums_).
  const auto reps = static_cast<std::size_t>(p_.replicates);
  const std::size_t n = groups_[g].instruments.size();
  for (std::size_t j = 0; j < n + group_runs_[g].greek_slots().size(); ++j) {
    const std::size_t greek = greek_offset_[g] + j - n;
    const std::size_t slot = j < n ? groups_[g].instruments[j] : p_.instruments.size() + greek;
    for (std::size_t r = 0; r < reps; ++r) {
      const double* m = group_moments_.data() + static_cast<std::ptrdiff_t>(j * reps + r) * nb * kMoments;
      scan(j < n ? groups_[g].instruments[j] : greeks_[greek].instrument, m, first, nb);
      sums_[slot * reps + r].add(m, nb);
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

std::int64_t PortfolioRun::compute(std::int64_t slices) {
  const std::int64_t budget = slices;
  if (pass_) {
    // A step does one phase: the regression pass's slices, or pricing's.
    const std::int64_t n = std::min(slices, pass_->slices_left());
    if (n > 0) pass_->simulate(n);
    return n;
  }
  const auto blocks = precision_ == Precision::fp32 ? &PortfolioRun::compute_blocks<float>
                                                     : &PortfolioRun::compute_blocks<double>;
  while (slices > 0 && range_ < ranges_.size()) {
    const BlockRange& r = ranges_[range_];
    if (offset_ >= r.size()) {   // an empty range (a rank without blocks)
      ++range_;
      offset_ = 0;
      continue;
    }
    const std::int64_t block = r.first + offset_;
    // A block a checkpoint holds begun goes on from its slices.
    if (slice_ == 0) {
      if (const auto it = begun_.find(block); it != begun_.end()) slice_ = it->second.slices;
    }
    if (slice_ == 0 && slices >= kSlicesPerBlock) {
      std::int64_t nb = std::min({slices / kSlicesPerBlock, r.size() - offset_, plan_.chunk_blocks});
      if (const auto it = begun_.upper_bound(block); it != begun_.end() && it->first < block + nb) nb = it->first - block;
      (this->*blocks)(block, nb, 0, kSlicesPerBlock);
      samples_computed_ += slice_window(block + nb - 1, plan_.samples, 0, kSlicesPerBlock).hi -
                           block * kSamplesPerBlock;
      offset_ += nb;
      blocks_computed_ += nb;
      slices -= nb * kSlicesPerBlock;
    } else {
      const int end = static_cast<int>(std::min<std::int64_t>(slices_in(block), slice_ + slices));
      (this->*blocks)(block, 1, slice_, end);
      const auto window = slice_window(block, plan_.samples, slice_, end);
      samples_computed_ += std::max<std::int64_t>(0, window.hi - window.lo);
      slices -= end - slice_;
      slice_ = end;
      if (slice_ == slices_in(block)) {
        slice_ = 0;
        ++offset_;
        ++blocks_computed_;
      }
    }
    if (offset_ >= r.size()) {
      ++range_;
      offset_ = 0;
    }
  }
  return budget - slices;
}

void PortfolioRun::advance() {
  if (steps_done_ >= steps_) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::int64_t slices = 0;
  // Local work; a failure on one rank (a launch error) becomes every rank's.
  mpi_.collective([&] { slices = compute(step_slices_); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++steps_done_;
  // Progress over all ranks (rank 0's own share says little when the
  // blocks are few: stac_a2 has one).
  double done[2] = {static_cast<double>(samples_computed_), pass_ ? static_cast<double>(pass_->samples_done()) : 0.0};
  MPI_Allreduce(MPI_IN_PLACE, done, 2, MPI_DOUBLE, MPI_SUM, mpi_.comm());
  done_samples_ = done[0];
  pass_done_ = done[1];
  // One all-reduce for the rest: the slowest rank's seconds per slice
  // (they size the next step), whether any rank has regression slices
  // left, and the most work left (the step count).
  double most[3] = {slices > 0 ? seconds / static_cast<double>(slices) : 0.0,
                    pass_ ? static_cast<double>(pass_->slices_left()) : 0.0, static_cast<double>(work_left())};
  MPI_Allreduce(MPI_IN_PLACE, most, 3, MPI_DOUBLE, MPI_MAX, mpi_.comm());
  // A host sized as a GPU (STRATA_LAUNCH_AS=cuda) grows its steps as a GPU
  // does whose time per slice never binds: its own time would size them
  // as a host's.
  const double per_slice = device_.gpu_sized ? 0.0 : most[0];
  bool phase_changed = false;
  if (pass_ && most[1] == 0.0) {
    finish_regression();
    settle();   // the next passes, should a rank have none of theirs
    phase_changed = true;
  }
  if (timed_) {
    // A new phase costs another time per slice: start at the first size
    // again. Else aim at kStepSeconds, growing at most twofold a step (a
    // fast first measurement must not make a step of minutes), never below
    // the first size (on a GPU, a launch that fills it).
    const std::int64_t first = first_step_slices();
    const double grown = 2.0 * static_cast<double>(step_slices_);
    const double aim = per_slice > 0 ? std::min(grown, kStepSeconds / per_slice) : grown;
    step_slices_ = phase_changed ? first : std::max(first, static_cast<std::int64_t>(aim));
    // Whole blocks stay within the planned memory.
    step_slices_ = std::min(step_slices_, plan_.chunk_blocks * kSlicesPerBlock);
  }
  if (phase_changed) {
    update_steps();
  } else {
    set_steps(most[2]);
  }
}

double PortfolioRun::paths_total() const {
  return static_cast<double>(plan_.paths) +
         static_cast<double>(regressions_.size()) * static_cast<double>(p_.regression_paths);
}

double PortfolioRun::paths_done() const {
  const double pricing = (restored_samples_ + done_samples_) * static_cast<double>(plan_.paths_per_sample);
  return regression_done_ + (pass_ ? pass_done_ : 0.0) + std::min(static_cast<double>(plan_.paths), pricing);
}

double PortfolioRun::work_fraction() const {
  const double pricing = (restored_samples_ + done_samples_) * static_cast<double>(plan_.paths_per_sample);
  double total = pricing_cost_ * static_cast<double>(plan_.paths);
  for (const std::size_t gi : regressions_) total += pass_cost_[gi] * static_cast<double>(p_.regression_paths);
  const double current_pass = pass_ ? pass_done_ * pass_cost_[regressions_[regression_]] : 0.0;
  const double done =
      regression_work_done_ + current_pass + pricing_cost_ * std::min(static_cast<double>(plan_.paths), pricing);
  return total > 0 ? std::min(1.0, done / total) : 1.0;
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
  // Blocks begun: [block, slices done, every slot's lane moments].
  std::vector<double> begun;
  for (const auto& [block, state] : begun_) {
    begun.push_back(static_cast<double>(block));   // exact: block < 2^53
    begun.push_back(state.slices);
    begun.insert(begun.end(), state.lanes.begin(), state.lanes.end());
  }
  w.records("begun", begun, static_cast<int>(lane_width_ + 2));
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
  blocks_computed_ = 0;
  samples_computed_ = 0;
  done_samples_ = 0;
  restored_samples_ = 0;
  for (const auto& [lo, hi] : covered) {
    restored_samples_ += static_cast<double>(std::min(hi * kSamplesPerBlock, plan_.samples) - lo * kSamplesPerBlock);
  }
  if (mpi_.root()) {
    for (std::size_t i = 0; i < sums_.size(); ++i) sums_[i].add_known(kept[i]);
  }
  // Blocks begun go on from their slices on the rank that now holds them,
  // where their samples are the same in both runs (as for the nodes).
  begun_.clear();
  const auto width = static_cast<std::size_t>(lane_width_ + 2);
  const std::vector<double> begun = r.records("begun", static_cast<int>(width));
  double begun_samples = 0;
  for (std::size_t k = 0; k + width <= begun.size(); k += width) {
    const auto block = static_cast<std::int64_t>(begun[k]);
    const bool full = (block + 1) * kSamplesPerBlock <= std::min(old_samples, plan_.samples);
    if (!same && !full) continue;
    const bool held = std::any_of(mine.begin(), mine.end(),
                                  [&](const BlockRange& b) { return b.first <= block && block < b.last; });
    if (!held) continue;
    Begun& state = begun_[block];
    state.slices = static_cast<int>(begun[k + 1]);
    state.lanes.assign(begun.begin() + static_cast<std::ptrdiff_t>(k + 2),
                       begun.begin() + static_cast<std::ptrdiff_t>(k + width));
    const auto window = slice_window(block, plan_.samples, 0, state.slices);
    begun_samples += static_cast<double>(std::max<std::int64_t>(0, window.hi - window.lo));
  }
  restored_samples_ += mpi_.sum(begun_samples);
  update_steps();
}

void PortfolioRun::resume_step_count(std::int64_t steps_then) {
  const double most_left = mpi_.max(static_cast<double>(work_left()));
  if (!timed_ || steps_then <= steps_done_ || most_left <= 0) return;
  // A fresh start begins with the first step's size and grows it from
  // measured times; the stopped run had grown it already.
  const auto left = static_cast<std::int64_t>(most_left);
  const std::int64_t per_step = (left + (steps_then - steps_done_) - 1) / (steps_then - steps_done_);
  step_slices_ = std::clamp(per_step, first_step_slices(), plan_.chunk_blocks * kSlicesPerBlock);
  steps_ = step_slices_ == per_step ? steps_then : steps_done_ + (left + step_slices_ - 1) / step_slices_;
}

std::vector<Estimate> price_portfolio(const Portfolio& p, const SamplePlan& plan, const Device& device,
                                      Precision precision, const MpiContext& mpi) {
  PortfolioRun run(p, plan, device, precision, mpi);
  while (run.steps_done() < run.steps()) run.advance();
  return run.finish();
}

}  // namespace strata::pricing
