// One path group on the run's backend: its grid, payoffs and shifts on the
// device, and the launches that turn a range of blocks into each
// instrument's block moments.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/buffer.hpp"
#include "kernels/pricing/sample_blocks.hpp"
#include "models/pricing/greeks.hpp"
#include "models/pricing/portfolio.hpp"

namespace strata::pricing {

// Device working memory, shared by the groups (they run one after the
// other): paths and step variances (as doubles, or floats in the same
// bytes) and, a thread a sample, each sample's values; lane moments, block
// moments.
struct GroupScratch {
  Buffer<double> work, lanes, blocks;
};

// Slices [begin, end) of one block (PathGroupRun::compute).
struct GroupSlices {
  int begin = 0, end = kernels::pricing::kSlicesPerBlock;
  double* lanes = nullptr;   // null: whole blocks
  bool last = true;
};

class PathGroupRun {
 public:
  // betas: per instrument of the group, the control variate's coefficient
  // (control_variates.hpp; empty or 0: none). pilot: the run that
  // estimates them, three slots (Y, C, Y + C - mu) per controlled instrument.
  // exercise: the group's American exercise table (longstaff_schwartz.hpp;
  // empty: zeros, for a run that does not price its Americans).
  PathGroupRun(const Portfolio& p, const PathGroup& g, const Device& device, Precision precision,
               std::int64_t max_blocks, const std::vector<double>& betas = {}, bool pilot = false,
               const std::vector<double>& exercise = {});
  ~PathGroupRun();
  PathGroupRun(PathGroupRun&&) noexcept;

  // Moments of blocks [first, first + nb) of every instrument of the group:
  // out[(kMoments * (j * nb + b)) + m] for its j-th instrument (Sobol':
  // j = instrument * replicates + replicate), then of its Greek slots
  // (j = (instruments + slot) * replicates + replicate).
  //
  // Or one block cut into slices (sample_blocks.hpp): slices [begin, end)
  // of block `first` (nb = 1), whose lane moments so far (every slot's, in
  // the kernel's layout) `slices.lanes` holds and receives; out gets the
  // block's moments only when slices.last (its last slice is done).
  void compute(std::int64_t first, std::int64_t nb, std::int64_t n_samples, GroupScratch& scratch,
               std::vector<double>& out, const GroupSlices& slices = GroupSlices{});
  // The Longstaff-Schwartz regression states (exercise_states.hpp) of
  // slices [slice_begin, slice_end) of blocks [first, first + nb) (nb = 1
  // unless the slices are whole blocks), on the device: per sample, the
  // underlying of each American at each of its exercise dates, written to
  // out (device memory) from sample out_first on, a date's states
  // consecutive (out_stride samples a date).
  void exercise_states(std::int64_t first, std::int64_t nb, std::int64_t n_samples, int slice_begin, int slice_end,
                       double* out, std::int64_t out_first, std::int64_t out_stride);
  // Doubles of each scratch buffer a launch of this group needs.
  std::size_t work_doubles() const { return work_doubles_; }
  std::size_t lane_doubles() const { return lane_doubles_; }
  std::size_t block_doubles() const { return block_doubles_; }
  const std::vector<double>& shifts() const { return shifts_; }   // instruments', then Greek slots'
  const std::vector<GreekSlot>& greek_slots() const { return greeks_.slots; }
  // Per instrument of the group: whether it has a control variate.
  const std::vector<bool>& controlled() const { return controlled_; }

  // Device bytes per block of a launch of p's group g (path storage, its
  // Greeks' values and lane moments).
  static std::size_t bytes_per_block(const Portfolio& p, const PathGroup& g, Precision precision);
  // Blocks per launch: as many as fit the backend's working-memory budget.
  static std::int64_t launch_blocks(const Portfolio& p, const PathGroup& g, Precision precision, const Device& device,
                                    std::int64_t chunk_blocks);
  // Device bytes of a run of p's group g given max_blocks (launch_blocks):
  // a thread a lane, or, where max_blocks' lanes would leave half a GPU
  // idle, a thread a sample (*per_sample), with as many path columns as a
  // launch's memory holds.
  static std::size_t launch_bytes(const Portfolio& p, const PathGroup& g, Precision precision, const Device& device,
                                  std::int64_t max_blocks, bool* per_sample = nullptr);

 private:
  template <class Real>
  struct Data;
  std::unique_ptr<Data<double>> fp64_;
  std::unique_ptr<Data<float>> fp32_;
  std::vector<double> shifts_;
  std::vector<bool> controlled_;
  std::vector<int> americans_;   // payoff slots of the group's Americans
  int exercise_row_ = 0;         // their exercise dates, summed
  GreekPlan greeks_;
  Device device_;
  bool per_sample_ = false;         // a thread a sample (launch_bytes)
  std::int64_t columns_ = 0;        // path columns: a launch's threads at most
  std::size_t payoff_slots_ = 0;    // moment slots of the payoffs (the Greeks' follow)
  std::size_t values_offset_ = 0;   // of work: the samples' values (a thread a sample)
  std::size_t cells_ = 0;   // path cells of a launch (the variances follow them)
  std::size_t path_doubles_ = 0;   // of work: the paths; the Greeks' lane values follow
  std::size_t work_doubles_ = 0, lane_doubles_ = 0, block_doubles_ = 0, block_lane_doubles_ = 0;
  Buffer<double> state_work_;   // the regression states' launches' paths, kept between calls
};

}  // namespace strata::pricing
