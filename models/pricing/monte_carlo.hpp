// Monte Carlo estimation of a portfolio: plan the samples over ranks and
// chunks, run the kernels on the run's backend, reduce reproducibly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/buffer.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "models/pricing/path_group_run.hpp"
#include "models/pricing/portfolio.hpp"

namespace strata {
class MpiContext;
class Timers;
class StateReader;
class StateWriter;
}  // namespace strata

namespace strata::pricing {

struct SamplePlan {
  std::int64_t samples = 0;           // antithetic: pairs
  std::int64_t paths = 0;             // paths actually simulated (samples * paths_per_sample)
  std::int64_t paths_per_sample = 1;  // 2 with antithetic, times the Sobol' replicates
  std::int64_t blocks = 0;            // global reduction blocks
  std::int64_t first_block = 0, last_block = 0;   // this rank's
  std::int64_t chunk_blocks = 0;      // blocks per kernel launch
  std::size_t device_bytes = 0;       // working memory on the device per rank
};

SamplePlan plan_samples(const Portfolio& p, const Device& device, const MpiContext& mpi);

struct Estimate {
  double price = 0, standard_error = 0, ci95_low = 0, ci95_high = 0;
  std::int64_t paths = 0;
  std::vector<double> replicate_prices{};   // Sobol': each scrambling's mean
  double control_beta = 0;                  // NaN: no control variate
  std::vector<double> exercise_coefficients{};   // american: exercise dates x (degree + 1)
};

// A Greek of an instrument (greeks.hpp): element = the asset's position in
// a basket, -1 for a scalar.
struct GreekEstimate {
  std::size_t instrument;
  std::string name;
  int element;
  Estimate estimate;
  std::string method{};   // GreekSlot::method
};

// One pricing run cut into steps. A step first simulates the Americans'
// regression paths (one group at a time, longstaff_schwartz.hpp) and fits
// their policies, then computes the next pieces of each rank's blocks for
// every instrument and folds the block moments into one TreeSum per
// instrument. A step's size is in slices (sample_blocks.hpp: 16 consecutive
// samples of a block), so a step may cover many blocks or part of one: with
// pricing.chunk_paths = 0, as many as take about kStepSeconds (measured,
// slowest rank), so that stop requests and progress wait at most about
// that long whatever the input; otherwise chunk_paths' blocks. Results do
// not depend on it.
//
// The state is those trees' finished nodes and the lane moments of the
// blocks begun (one per rank at most, or several after a restart), which
// is what a checkpoint stores: nodes and blocks are positions in the global
// tree, so a restart may use another rank count, or more paths, and still
// end with the bits of an uninterrupted run. The regression pass is
// recomputed on restart (the same bits).
class RegressionPass;

inline constexpr double kStepSeconds = 0.25;

class PortfolioRun {
 public:
  // Collective (agrees on the step count).
  // timers: where the Longstaff-Schwartz fits' host time goes (phase
  // "regression_fit", inside the step's "compute"); none: not timed apart.
  PortfolioRun(const Portfolio& p, const SamplePlan& plan, const Device& device, Precision precision,
               const MpiContext& mpi, Timers* timers = nullptr);
  ~PortfolioRun();

  // Steps of the whole run: an estimate while steps are sized by time,
  // the same on every rank, and steps_done() once all is done.
  std::int64_t steps() const { return steps_; }
  std::int64_t steps_done() const { return steps_done_; }
  void advance();                               // collective
  double paths_total() const;                   // pricing and regression paths
  double paths_done() const;                    // whole run, all ranks, as of the last step
  // The share of the run's work done, for progress and its ETA: each phase's
  // paths weighted by what one costs (pass_cost_), so a cheap regression
  // pass is not half of a run whose pricing paths carry Greeks.
  double work_fraction() const;
  std::int64_t blocks_computed() const { return blocks_computed_; }   // by this process, this rank
  std::optional<std::string> nonfinite() const { return first_bad_; }
  void inject_nonfinite();

  void save(StateWriter& w) const;              // collective
  void restore(StateReader& r);                 // collective
  // After restore: steps sized so that the run still counts `steps_then`
  // steps (the count of the run that was stopped), where the memory plan
  // and the first step's size allow. Collective.
  void resume_step_count(std::int64_t steps_then);
  std::vector<Estimate> finish();               // collective: the estimates on every rank
  const std::vector<GreekEstimate>& greeks() const { return greeks_; }   // after finish()

 private:
  struct Begun {                                // a block cut into slices
    int slices = 0;                             // done
    std::vector<double> lanes;                  // every slot's lane moments (lane_offset_)
  };
  template <class Real>
  void compute_blocks(std::int64_t first, std::int64_t nb, int begin, int end);
  std::int64_t compute(std::int64_t slices);    // local; returns the slices done
  void fold_terminal(std::size_t instrument, std::int64_t first, std::int64_t nb);
  void fold_group(std::size_t group, std::int64_t first, std::int64_t nb);
  void prepare_pricing();                       // collective
  void finish_regression();                     // collective: fit, then the next pass or pricing
  void settle();                                // collective: finishes passes every rank is done with
  void update_steps();                          // collective
  void set_steps(double most_left);             // from the most work any rank has left
  std::int64_t work_left() const;               // this rank's slices, every phase
  std::int64_t slices_left() const;             // this rank's, pricing only
  std::int64_t first_step_slices() const;       // a phase's first step
  int slices_in(std::int64_t block) const;
  void scan(std::size_t instrument, const double* moments, std::int64_t first, std::int64_t nb);
  void reset_ranges(std::vector<BlockRange> ranges, std::int64_t steps_done);
  Estimate slot_estimate(std::size_t slot, double shift);   // collective

  const Portfolio& p_;
  SamplePlan plan_;
  Device device_;
  Precision precision_;
  const MpiContext& mpi_;
  Timers* timers_ = nullptr;
  std::vector<double> shifts_;
  std::vector<double> control_beta_;            // per instrument; NaN: none
  std::vector<std::size_t> terminal_;           // instruments sampled at maturity only (European GBM)
  std::vector<PathGroup> groups_;               // the others, by shared paths
  std::vector<PathGroupRun> group_runs_;
  std::vector<std::vector<double>> tables_;     // per group: its American exercise table
  std::vector<std::vector<double>> exercise_;   // per instrument: its American exercise coefficients
  std::vector<GreekEstimate> greeks_;           // every group's Greek slots, in order
  std::vector<double> greek_shifts_;
  std::vector<std::size_t> greek_offset_;       // per group: its first Greek slot
  std::vector<std::size_t> lane_offset_;        // a begun block's lanes: terminal instruments', then groups'
  std::size_t lane_width_ = 0;
  GroupScratch scratch_;
  std::vector<double> group_moments_;
  std::vector<TreeSum> sums_;
  std::vector<BlockRange> ranges_;              // this rank's blocks still to compute, in order
  std::size_t range_ = 0;                       // cursor: ranges_[range_].first + offset_, slice slice_
  std::int64_t offset_ = 0;
  int slice_ = 0;
  std::map<std::int64_t, Begun> begun_;         // blocks begun and not finished, by index
  // The regression passes still to do: groups_ indices; the current one.
  std::vector<std::size_t> regressions_;
  std::size_t regression_ = 0;
  std::unique_ptr<RegressionPass> pass_;
  double regression_done_ = 0;                  // paths of the passes finished
  // Per group, the cost of one pass over one of its paths (time steps x
  // assets); a pricing path costs every group's base and Greek scenarios,
  // plus one for the lone Europeans (pricing_cost_).
  std::vector<double> pass_cost_;
  double pricing_cost_ = 0;
  double regression_work_done_ = 0;             // the finished passes' paths times their pass cost
  bool timed_ = true;                           // steps sized by time (chunk_paths = 0)
  std::int64_t step_slices_ = 1;
  std::int64_t steps_ = 0, steps_done_ = 0;
  std::int64_t blocks_computed_ = 0;
  std::int64_t samples_computed_ = 0;           // by this process, this rank (pricing)
  double done_samples_ = 0, restored_samples_ = 0, pass_done_ = 0;   // all ranks: progress
  std::optional<std::string> first_bad_;
  Buffer<double> lanes_, blocks_;
  std::vector<double> chunk_moments_;
};

// Prices every instrument; collective.
std::vector<Estimate> price_portfolio(const Portfolio& p, const SamplePlan& plan, const Device& device,
                                      Precision precision, const MpiContext& mpi);

}  // namespace strata::pricing
