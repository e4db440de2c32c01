// The regression pass of Longstaff-Schwartz: simulate a group's paths in the
// fixed block/lane shape (sample_blocks.hpp), or a thread a sample, and keep,
// per sample, only the underlying of each American instrument at each of
// its exercise dates.
// The fit (models/pricing/longstaff_schwartz.cpp) reads these states.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/pricing/path_group.hpp"

namespace strata::kernels::pricing {

template <class Real>
struct ExerciseStates {
  PathGroupKernel<Real> group;  // simulate() and view() only: one lane, copy 0, replicate 0
  const int* americans;         // indices into group.payoffs.specs of the group's American instruments
  int n_americans;
  int row;                    // states per sample: the sum of their exercise dates
  std::int64_t first_sample;  // global sample of out's first
  double* out;                // [american's dates, in order][sample - first_sample]
  std::int64_t stride;        // samples out holds: a date's states are consecutive

  // One copy of the base paths per sample, then the states: about the
  // base scenario's own work, halved with antithetic copies.
  Work work(std::int64_t n) const {
    return group.paths.per_scenario * (group.paths.samples(n) / (group.paths.antithetic ? 2.0 : 1.0));
  }

  // Lane i's samples, or (paths.per_sample) thread i's one.
  STRATA_HD void operator()(std::int64_t i) const {
    const GroupPaths<Real>& paths = group.paths;
    if (paths.per_sample) {
      const std::int64_t s = paths.sample_of(paths.thread_begin + i);
      if (s < paths.n_samples) states(s, i);
      return;
    }
    const SampleWindow w = slice_window(paths.first_block + i / kLanes, paths.n_samples, paths.slice_begin,
                                        paths.slice_end);
    for (std::int64_t s = w.first(i % kLanes); s < w.hi; s += kLanes) states(s, i);
  }

  // Sample s's states, its path in column i.
  STRATA_HD void states(std::int64_t s, std::int64_t i) const {
    group.template simulate<1, rng::ScalarMath>(s, i, 1, 0, 0);
    const PathView<Real> v = group.template view<1>(i, 0, 0);
    double* o = out + (s - first_sample);
    for (int a = 0; a < n_americans; ++a) {
      const PayoffSpec<Real>& p = group.payoffs.specs[americans[a]];
      for (int f = 0; f < p.fixings; ++f, o += stride)
        *o = static_cast<double>(average_underlying(p, v, v.fix_steps[p.fix_begin + f]));
    }
  }
};

}  // namespace strata::kernels::pricing
