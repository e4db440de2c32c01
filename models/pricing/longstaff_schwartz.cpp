#include "models/pricing/longstaff_schwartz.hpp"

#include <algorithm>
#include <cmath>

#include "engine/backend/buffer.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "kernels/pricing/exercise_fit.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "models/pricing/kernels.hpp"
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


// Backward induction for one American over this rank's regression paths,
// on the device where their states are (exercise_fit.hpp): states[(column
// + f) * local + s] is its underlying at exercise date f on local path s.
// Per date three launches and the blocks' sums read back; the blocks are
// added over ranks and the system solved on the host, in double.
void fit_one(const Device& device, const Portfolio& p, const Instrument& in, const std::vector<double>& grid,
             const double* states, int column, std::int64_t local, BlockRange mine, std::int64_t blocks,
             const MpiContext& mpi, double* beta_out) {
  const int m = in.degree + 1;
  const int width = fit_width(in.degree);  // the normal matrix's upper triangle, the right-hand side
  const std::vector<int> steps = fixing_steps(in, grid);
  auto discount = [&](int f) {
    return std::exp(-p.rate * grid[static_cast<std::size_t>(steps[static_cast<std::size_t>(f)] - 1)]);
  };
  const int last = in.fixings - 1;
  const std::int64_t lanes = mine.size() * kLanes;
  // Realised cash flow of each path under the policy fitted so far,
  // discounted to time 0; a date's terms, lanes' and blocks' sums.
  Buffer<double> cash, terms, lane_sums, block_sums;
  mpi.collective([&] {   // any rank's allocation failure is every rank's, before the sums' collectives
    cash = Buffer<double>(device, static_cast<std::size_t>(std::max<std::int64_t>(1, local)));
    terms = Buffer<double>(device, static_cast<std::size_t>(std::max<std::int64_t>(1, local * width)));
    lane_sums = Buffer<double>(device, static_cast<std::size_t>(std::max<std::int64_t>(1, lanes * width)));
    block_sums = Buffer<double>(device, static_cast<std::size_t>(std::max<std::int64_t>(1, mine.size() * width)));
  });
  std::vector<double> sums(static_cast<std::size_t>(mine.size() * width));
  FitDate date{.states = states, .column = column, .local = local,
               .cash = cash.data(), .terms = terms.data(), .call = in.call, .laguerre = in.laguerre,
               .degree = in.degree, .strike = in.strike};
  for (int f = last - 1; f >= 0; --f) {
    date.date = f;
    date.discount_next = discount(f + 1);
    date.discount = discount(f);
    date.first = f == last - 1;
    if (local > 0) {
      parallel_for(device, local, date);
      parallel_for(device, width * lanes, FitLaneSums{terms.data(), lane_sums.data(), local, lanes, width});
      parallel_for(device, mine.size() * width, FitLaneTree{lane_sums.data(), block_sums.data(), width});
      block_sums.copy_to_host(sums.data(), sums.size());
    }
    TreeSum tree(blocks, mine, width);
    tree.add(sums.data(), mine.size());
    const std::vector<double> total = tree.finish(mpi);
    // The matrix from its upper triangle (FitDate's order).
    std::vector<double> matrix(static_cast<std::size_t>(m * m));
    auto term = total.begin();
    for (int a = 0; a < m; ++a) {
      for (int b = a; b < m; ++b, ++term) {
        matrix[static_cast<std::size_t>(a * m + b)] = *term;
        matrix[static_cast<std::size_t>(b * m + a)] = *term;
      }
    }
    const LeastSquaresFit fit = solve_normal_equations(matrix, std::vector<double>(term, total.end()), m);
    std::copy(fit.beta.begin(), fit.beta.end(), beta_out + f * m);
    std::copy(fit.beta.begin(), fit.beta.end(), date.beta);   // the next date's policy at f + 1
  }
}

}  // namespace

std::size_t regression_bytes(const Portfolio& p, const PathGroup& g, int ranks) {
  const std::size_t row = state_row(p, g);
  if (row == 0) return 0;
  const std::int64_t blocks = (p.regression_paths + kSamplesPerBlock - 1) / kSamplesPerBlock;
  const std::int64_t mine = (blocks + ranks - 1) / ranks;
  // Per sample its states, its cash flow and a date's terms (the widest
  // American's), per lane its sums.
  std::size_t width = 0;
  for (std::size_t i : g.instruments) {
    const Instrument& in = p.instruments[i];
    if (in.type == "american") width = std::max(width, static_cast<std::size_t>(fit_width(in.degree)));
  }
  return static_cast<std::size_t>(mine * kSamplesPerBlock) * (row + 1 + width) * sizeof(double) +
         static_cast<std::size_t>(mine * kLanes) * width * sizeof(double);
}

RegressionPass::RegressionPass(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision,
                               const MpiContext& mpi)
    : p_(p), g_(g), q_(p), device_(device), offsets_(exercise_offsets(p, g)), row_(state_row(p, g)) {
  if (offsets_.back() == 0) return;
  // The regression paths: plain (no antithetic pair, one Sobol' scrambling)
  // from another seed.
  q_.seed = p.seed ^ kRegressionSeedXor;
  q_.antithetic = false;
  q_.replicates = 1;
  q_.control_variate = false;
  q_.greeks.clear();   // the fit needs the base paths only
  q_.paths = p.regression_paths;  // what a launch's path columns are sized for
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
    local_ = std::max<std::int64_t>(0, end - mine_.first * kSamplesPerBlock);
    states_ = Buffer<double>(device, std::max<std::size_t>(1, static_cast<std::size_t>(local_) * row_));
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
      run_->exercise_states(block_, nb, samples_, 0, kSlicesPerBlock, states_.data(), origin, local_);
      samples_done_ = std::min(samples_, (block_ + nb) * kSamplesPerBlock) - origin;
      block_ += nb;
      slices -= nb * kSlicesPerBlock;
      continue;
    }
    const int end = static_cast<int>(std::min<std::int64_t>(kSlicesPerBlock, slice_ + slices));
    run_->exercise_states(block_, 1, samples_, slice_, end, states_.data(), origin, local_);
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
  std::size_t column = 0;
  for (std::size_t j = 0; j < g_.instruments.size(); ++j) {
    if (offsets_[j] < 0) continue;
    const Instrument& in = p_.instruments[g_.instruments[j]];
    fit_one(device_, p_, in, g_.grid, states_.data(), static_cast<int>(column), local_, mine_, blocks_, mpi,
            table.data() + offsets_[j]);
    column += static_cast<std::size_t>(in.fixings);
  }
  return table;
}

}  // namespace strata::pricing
