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

using kernels::pricing::continuation_value;
using kernels::pricing::exercise_basis;
using kernels::pricing::kMaxExerciseDegree;
using kernels::pricing::kSamplesPerBlock;

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

}  // namespace

std::size_t regression_bytes(const Portfolio& p, const PathGroup& g, int ranks) {
  const std::size_t row = state_row(p, g);
  if (row == 0) return 0;
  const std::int64_t blocks = (p.regression_paths + kSamplesPerBlock - 1) / kSamplesPerBlock;
  const std::int64_t mine = (blocks + ranks - 1) / ranks;
  return static_cast<std::size_t>(mine * kSamplesPerBlock) * (row + 1) * sizeof(double);
}

namespace {

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

std::vector<double> fit_exercise(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision,
                                 const MpiContext& mpi) {
  const std::vector<int> offsets = exercise_offsets(p, g);
  std::vector<double> table(static_cast<std::size_t>(offsets.back()), 0.0);
  if (table.empty()) return table;
  // The regression paths: plain (no antithetic pair, one Sobol' scrambling)
  // from another seed.
  Portfolio q = p;
  q.seed = p.seed ^ kRegressionSeedXor;
  q.antithetic = false;
  q.replicates = 1;
  q.control_variate = false;
  q.greeks.clear();   // the fit needs the base paths only
  const std::int64_t samples = p.regression_paths;
  const std::int64_t blocks = (samples + kSamplesPerBlock - 1) / kSamplesPerBlock;
  const BlockRange mine = block_range(blocks, mpi.rank(), mpi.size());
  std::vector<double> states;
  mpi.collective([&] {
    const std::int64_t nb =
        PathGroupRun::launch_blocks(g, false, precision, 1, device, std::max<std::int64_t>(1, mine.size()));
    PathGroupRun run(q, g, device, precision, nb, {}, false, table);
    states = run.exercise_states(mine.first, mine.size(), samples);
  });
  const std::size_t row = state_row(p, g);
  const auto local = static_cast<std::int64_t>(states.size() / row);
  std::size_t column = 0;
  for (std::size_t j = 0; j < g.instruments.size(); ++j) {
    if (offsets[j] < 0) continue;
    const Instrument& in = p.instruments[g.instruments[j]];
    fit_one(p, in, g.grid, states.data() + column, row, local, mine, blocks, mpi, table.data() + offsets[j]);
    column += static_cast<std::size_t>(in.fixings);
  }
  return table;
}

}  // namespace strata::pricing
