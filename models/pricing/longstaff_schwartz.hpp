// The Longstaff-Schwartz regression pass (Longstaff and Schwartz 2001,
// "Valuing American options by simulation: a simple least-squares
// approach", Rev. Financ. Stud. 14): before pricing, an independent set of
// paths fits, date by date from the last exercise date back, the
// continuation value of each American instrument as a regression on the
// basis of kernels/pricing/exercise_basis.hpp over the in-the-money paths.
// The pricing pass then exercises its own paths by that fixed policy
// (payoffs.hpp, american_value), so the price is low-biased and its
// standard error is that of ordinary independent samples.
//
// Reproducibility: the regression paths are cut into the fixed blocks of
// sample_blocks.hpp and split over ranks like the pricing blocks; each date's
// normal-equation sums are per-block sums (paths in block order) reduced
// along the fixed TreeSum tree, so every rank solves the same system to the
// same bits whatever the rank count, and the coefficients, hence the
// price, are bitwise independent of it. A restart recomputes them: the same
// inputs give the same bits, and a checkpoint need not carry them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/buffer.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "models/pricing/path_group_run.hpp"
#include "models/pricing/portfolio.hpp"

namespace strata {
class MpiContext;
}

namespace strata::pricing {

// The regression paths' Philox key (and Sobol' scrambling) is that of
// run.seed XOR this constant ("LSM-regr" in ASCII): another stream than
// every pricing path of the same seed.
inline constexpr std::uint64_t kRegressionSeedXor = 0x4c534d2d72656772ULL;

// Offsets of each instrument of the group in the group's exercise table
// (-1: not an American), and the table's size last: per American, its
// exercise dates x (degree + 1) coefficients, in group order.
std::vector<int> exercise_offsets(const Portfolio& p, const PathGroup& g);

// Device bytes the regression pass holds on one of `ranks` ranks: its
// paths' states at the exercise dates, their cash flows and a date's terms
// and lane sums of the fit.
std::size_t regression_bytes(const Portfolio& p, const PathGroup& g, int ranks);

// One group's regression pass, cut so that a run can stop or report
// between its pieces: simulate() the next slices (sample_blocks.hpp) of
// this rank's regression blocks, as many calls as it takes, then, once
// every rank has simulated all of its own, fit() the policy. The states do
// not depend on how the slices were cut, so neither does the policy.
class RegressionPass {
 public:
  RegressionPass(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision,
                 const MpiContext& mpi);
  ~RegressionPass();
  // This rank's slices still to simulate, and regression paths done.
  std::int64_t slices_left() const;
  std::int64_t samples_done() const { return samples_done_; }
  std::int64_t samples() const { return samples_; }
  // The next `slices` slices of this rank's blocks (at least one while any
  // is left). Local.
  void simulate(std::int64_t slices);
  // The group's exercise table (zeros at each instrument's last date,
  // where the policy is the intrinsic value). Collective.
  std::vector<double> fit(const MpiContext& mpi) const;

 private:
  const Portfolio& p_;
  PathGroup g_;
  Portfolio q_;   // the regression paths' portfolio (another seed, plain paths)
  Device device_;
  std::vector<int> offsets_;
  std::size_t row_ = 0;
  std::int64_t samples_ = 0, blocks_ = 0;
  BlockRange mine_;
  std::unique_ptr<PathGroupRun> run_;
  std::int64_t local_ = 0;       // this rank's regression samples
  Buffer<double> states_;        // on the device: row x this rank's samples (a date's consecutive)
  std::int64_t block_ = 0;       // cursor: the next block and slice
  int slice_ = 0;
  std::int64_t samples_done_ = 0;
};

}  // namespace strata::pricing
