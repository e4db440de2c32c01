#include "models/pricing/longstaff_schwartz.hpp"

#include <algorithm>
#include <cmath>

#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "kernels/pricing/exercise_basis.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "models/pricing/least_squares.hpp"
#include "models/pricing/path_group_run.hpp"

namespace strata::pricing {

using namespace kernels::pricing;

std::vector<int> exercise_offsets(const Portfolio& p, const PathGroup& g) {
  std::vector<int> out;
  int total = 0;
  for (std::size_t i : g.instruments) {
    const Instrument& in = p.instruments[i];
    out.push_back(in.type == "american" ? total : -1);
    if (in.type == "american") total += in.fixings * (in.degree + 1);
  }
  out.push_back(total);
  return out;
}

namespace {

// Doubles of one regression path's states: every American's exercise dates.
std::size_t state_row(const Portfolio& p, const PathGroup& g) {
  std::size_t row = 0;
  for (std::size_t i : g.instruments) {
    if (p.instruments[i].type == "american") row += static_cast<std::size_t>(p.instruments[i].fixings);
  }
  return row;
}


// Backward induction for one American over this rank's regression paths:
// u[s * row + f] is its underlying at exercise date f on local path s.
void fit_one(const Portfolio& p, const Instrument& in, const std::vector<double>& grid, const double* u,
             std::size_t row, std::int64_t local, BlockRange mine, std::int64_t blocks, const MpiContext& mpi,
             double* beta_out) {
  const int m = in.degree + 1;
  const int width = m * m + m;  // normal matrix, right-hand side
  const std::vector<int> steps = fixing_steps(in, grid);
  auto discount = [&](int f) {
    return std::exp(-p.rate * grid[static_cast<std::size_t>(steps[static_cast<std::size_t>(f)] - 1)]);
  };
  auto intrinsic = [&](double s) { return std::max(in.call ? s - in.strike : in.strike - s, 0.0); };
  const int last = in.fixings - 1;
  // Realised cash flow of each path under the policy fitted so far,
  // discounted to time 0.
  std::vector<double> cash(static_cast<std::size_t>(local));
  for (std::int64_t s = 0; s < local; ++s)
    cash[static_cast<std::size_t>(s)] =
        discount(last) * intrinsic(u[static_cast<std::size_t>(s) * row + static_cast<std::size_t>(last)]);
  std::vector<double> sums(static_cast<std::size_t>(mine.size() * width));
  double phi[kMaxExerciseDegree + 1];
  for (int f = last - 1; f >= 0; --f) {
    const double d = discount(f);
    std::fill(sums.begin(), sums.end(), 0.0);
    for (std::int64_t s = 0; s < local; ++s) {
      const double us = u[static_cast<std::size_t>(s) * row + static_cast<std::size_t>(f)];
      if (!(intrinsic(us) > 0.0)) continue;
      exercise_basis(in.laguerre, in.degree, us / in.strike, phi);
      const double y = cash[static_cast<std::size_t>(s)] / d;  // continuation realised, in date-f money
      double* block = sums.data() + (s / kSamplesPerBlock) * width;
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < m; ++j) block[i * m + j] += phi[i] * phi[j];
        block[m * m + i] += phi[i] * y;
      }
    }
    TreeSum tree(blocks, mine, width);
    tree.add(sums.data(), mine.size());
    const std::vector<double> total = tree.finish(mpi);
    const LeastSquaresFit fit = solve_normal_equations(std::vector<double>(total.begin(), total.begin() + m * m),
                                                       std::vector<double>(total.begin() + m * m, total.end()), m);
    double* beta = beta_out + f * m;
    std::copy(fit.beta.begin(), fit.beta.end(), beta);
    for (std::int64_t s = 0; s < local; ++s) {
      const double us = u[static_cast<std::size_t>(s) * row + static_cast<std::size_t>(f)];
      const double value = intrinsic(us);
      if (value > 0.0 && value >= continuation_value(in.laguerre, in.degree, beta, us / in.strike)) {
        cash[static_cast<std::size_t>(s)] = d * value;
      }
    }
  }
}

}  // namespace

std::size_t regression_bytes(const Portfolio& p, const PathGroup& g, int ranks) {
  const std::size_t row = state_row(p, g);
  if (row == 0) return 0;
  const std::int64_t blocks = (p.regression_paths + kSamplesPerBlock - 1) / kSamplesPerBlock;
  const std::int64_t mine = (blocks + ranks - 1) / ranks;
  return static_cast<std::size_t>(mine * kSamplesPerBlock) * (row + 1) * sizeof(double);
}

RegressionPass::RegressionPass(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision,
                               const MpiContext& mpi)
    : p_(p), g_(g), q_(p), offsets_(exercise_offsets(p, g)), row_(state_row(p, g)) {
  if (offsets_.back() == 0) return;
  // The regression paths: plain (no antithetic pair, one Sobol' scrambling)
  // from another seed.
  q_.seed = p.seed ^ kRegressionSeedXor;
  q_.antithetic = false;
  q_.replicates = 1;
  q_.control_variate = false;
  q_.greeks.clear();   // the fit needs the base paths only
  samples_ = p.regression_paths;
  blocks_ = (samples_ + kSamplesPerBlock - 1) / kSamplesPerBlock;
  mine_ = block_range(blocks_, mpi.rank(), mpi.size());
  block_ = mine_.first;
  const std::int64_t end = std::min(samples_, mine_.last * kSamplesPerBlock);
  mpi.collective([&] {
    // q_ has no antithetic pair, one replicate and no Greeks; its exercise
    // table is zeros (PathGroupRun's default), the policy to be fitted.
    const std::int64_t nb =
        PathGroupRun::launch_blocks(q_, g, precision, device, std::max<std::int64_t>(1, mine_.size()));
    run_ = std::make_unique<PathGroupRun>(q_, g_, device, precision, nb);
    states_.assign(static_cast<std::size_t>(std::max<std::int64_t>(0, end - mine_.first * kSamplesPerBlock)) * row_,
                   0.0);
  });
}

RegressionPass::~RegressionPass() = default;

std::int64_t RegressionPass::slices_left() const {
  if (block_ >= mine_.last) return 0;
  return (mine_.last - block_) * kSlicesPerBlock - slice_;
}

void RegressionPass::simulate(std::int64_t slices) {
  const std::int64_t origin = mine_.first * kSamplesPerBlock;
  while (slices > 0 && block_ < mine_.last) {
    if (slice_ == 0 && slices >= kSlicesPerBlock) {
      const std::int64_t nb = std::min(slices / kSlicesPerBlock, mine_.last - block_);
      run_->exercise_states(block_, nb, samples_, 0, kSlicesPerBlock, states_.data(), origin);
      samples_done_ = std::min(samples_, (block_ + nb) * kSamplesPerBlock) - origin;
      block_ += nb;
      slices -= nb * kSlicesPerBlock;
      continue;
    }
    const int end = static_cast<int>(std::min<std::int64_t>(kSlicesPerBlock, slice_ + slices));
    run_->exercise_states(block_, 1, samples_, slice_, end, states_.data(), origin);
    slices -= end - slice_;
    slice_ = end;
    samples_done_ = std::min(samples_, block_ * kSamplesPerBlock + slice_ * kSliceSamples) - origin;
    if (slice_ == kSlicesPerBlock) {
      slice_ = 0;
      ++block_;
    }
  }
}

std::vector<double> RegressionPass::fit(const MpiContext& mpi) const {
  std::vector<double> table(static_cast<std::size_t>(offsets_.back()), 0.0);
  if (table.empty()) return table;
  const auto local = static_cast<std::int64_t>(states_.size() / row_);
  std::size_t column = 0;
  for (std::size_t j = 0; j < g_.instruments.size(); ++j) {
    if (offsets_[j] < 0) continue;
    const Instrument& in = p_.instruments[g_.instruments[j]];
    fit_one(p_, in, g_.grid, states_.data() + column, row_, local, mine_, blocks_, mpi, table.data() + offsets_[j]);
    column += static_cast<std::size_t>(in.fixings);
  }
  return table;
}

}  // namespace strata::pricing
