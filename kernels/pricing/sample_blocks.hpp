// The fixed reduction shape of Monte Carlo estimates. Samples are numbered
// 0..n-1 globally; block b holds samples [b*kSamplesPerBlock, (b+1)*...).
// Inside a block, lane l (of kLanes) adds samples l, l+kLanes, l+2kLanes, ...
// in order, and the lanes are combined by a fixed pairwise tree. So a block's
// moments depend only on (seed, block index), never on how many blocks a
// chunk, a rank or a device holds: the root of the bitwise reproducibility
// guarantee. On CUDA, lanes are threads and consecutive lanes read
// consecutive samples.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/work.hpp"
#include "kernels/rng/normal.hpp"

namespace strata::kernels::pricing {

inline constexpr std::int64_t kLanes = 256;
inline constexpr std::int64_t kSamplesPerBlock = 64 * kLanes;   // 16384
inline constexpr int kMoments = 2;                              // sum and sum of squares
// A slice is kSliceSamples consecutive samples of a block: slice r of block
// b is samples [b*kSamplesPerBlock + r*kSliceSamples, ... + kSliceSamples),
// one each for kSliceSamples consecutive lanes. Every kernel computes
// slices [slice_begin, slice_end) of each block it is given, and from
// slice_begin > 0 continues the lane moments it finds rather than zeroing
// them: each lane still adds its samples in increasing order, so a block
// cut into several launches has the same moments, bit for bit, as one
// launch. (A run cuts a block when a block takes longer than a step may:
// stop requests and progress are honoured at step boundaries.) A slice is
// a whole batch of the host's batched kernels (kBatch = 16 lanes), so a
// batch is wholly inside a window or wholly outside it.
inline constexpr std::int64_t kSliceSamples = 16;
inline constexpr int kSlicesPerBlock = static_cast<int>(kSamplesPerBlock / kSliceSamples);   // 1024
// The host's batch of lanes: whole vectors at every width up to AVX-512 floats.
inline constexpr int kBatch = 16;
static_assert(kLanes % kBatch == 0, "a batch of lanes must not straddle two blocks");
static_assert(kSliceSamples % kBatch == 0, "a batch of lanes must not straddle two slices");

// Samples [lo, hi) of slices [slice_begin, slice_end) of the block that
// starts at sample `begin`.
struct SampleWindow {
  std::int64_t begin, lo, hi;
  // The first sample of `lane` (of kLanes) in the window.
  STRATA_HD std::int64_t first(std::int64_t lane) const {
    std::int64_t s = begin + lane;
    if (s < lo) s += (lo - s + kLanes - 1) / kLanes * kLanes;
    return s;
  }
};
STRATA_HD inline SampleWindow slice_window(std::int64_t block, std::int64_t n_samples, int slice_begin,
                                           int slice_end) {
  const std::int64_t begin = block * kSamplesPerBlock;
  std::int64_t hi = begin + slice_end * kSliceSamples;
  if (hi > n_samples) hi = n_samples;
  return {begin, begin + slice_begin * kSliceSamples, hi};
}

// Lane partial moments of (x - shift), x = sampler(sample). Index i runs over
// blocks_in_chunk * kLanes; lanes[kMoments * i + m] receives moment m.
// Shifting by a value close to the mean (the payoff of the median path)
// keeps sum-of-squares variance estimates free of cancellation.
template <class Sampler>
struct LaneMoments {
  Sampler sampler;
  std::int64_t first_block;   // global index of the chunk's first block
  std::int64_t n_samples;     // global sample count (the last block may be short)
  double shift;
  double* lanes;
  int slice_begin = 0, slice_end = kSlicesPerBlock;

  // The window's samples of n lanes (the cost model).
  Work work(std::int64_t n) const {
    const double samples = static_cast<double>(n / kLanes) * static_cast<double>((slice_end - slice_begin) * kSliceSamples);
    return Sampler::sample_work() * samples;
  }

  // Lanes i0 .. i0 + W - 1, which read consecutive samples through the
  // sampler's values<W, Math>; the samples past the end of a short last
  // block are computed and dropped (a sample's bits never depend on where a
  // chunk or a block ends).
  template <int W, class Math>
  STRATA_HD void run(std::int64_t i0) const {
    const SampleWindow win = slice_window(first_block + i0 / kLanes, n_samples, slice_begin, slice_end);
    double s1[W], s2[W], x[W];
    for (int w = 0; w < W; ++w) {
      s1[w] = slice_begin > 0 ? lanes[kMoments * (i0 + w)] : 0.0;
      s2[w] = slice_begin > 0 ? lanes[kMoments * (i0 + w) + 1] : 0.0;
    }
    for (std::int64_t s = win.first(i0 % kLanes); s < win.hi; s += kLanes) {
      sampler.template values<W, Math>(s, x);
      const int live = win.hi - s < W ? static_cast<int>(win.hi - s) : W;
      for (int w = 0; w < live; ++w) {
        const double d = x[w] - shift;
        s1[w] += d;
        s2[w] += d * d;
      }
    }
    for (int w = 0; w < W; ++w) {
      lanes[kMoments * (i0 + w)] = s1[w];
      lanes[kMoments * (i0 + w) + 1] = s2[w];
    }
  }

  STRATA_HD void operator()(std::int64_t i) const { run<1, rng::ScalarMath>(i); }
};

// LaneMoments with the host's vectorised launch: batch g runs the kBatch
// lanes g*kBatch.. in the sampler's `omp simd` loops with libmvec, every
// lane adding its samples in LaneMoments' order. A member, not a base: a
// kernel's argument is an aggregate without bases (docs/gpu.md).
template <class Sampler>
struct LaneMomentsBatched {
  LaneMoments<Sampler> moments;

  STRATA_HD void operator()(std::int64_t lane) const { moments(lane); }
  Work work(std::int64_t n) const { return moments.work(n); }
  void host_for(std::int64_t n) const {
#pragma omp parallel for schedule(static)
    for (std::int64_t g = 0; g < n / kBatch; ++g) moments.template run<kBatch, rng::LaneMath>(g * kBatch);
  }
};

// The pairwise tree over one block's kLanes lane sums: lane l's component
// m (a moment, or a term of a regression's sums) at a[l * lane_stride + m *
// component_stride]; out[m] gets the block's sum, ((lane 0 + lane 128) +
// (lane 64 + lane 192)) + ... (level by level, lane l adds lane l + half).
// The first level reads memory in loads independent of each other, the
// rest add in the thread's own array: no level waits on a store to memory.
STRATA_HD inline void lane_tree(const double* a, std::int64_t lane_stride, std::int64_t component_stride, double* out,
                                int components = kMoments) {
  constexpr int kHalf = kLanes / 2;
  for (int m = 0; m < components; ++m) {
    const double* c = a + m * component_stride;
    double v[kHalf];
    for (int l = 0; l < kHalf; ++l) v[l] = c[l * lane_stride] + c[(l + kHalf) * lane_stride];
    for (int half = kHalf / 2; half > 0; half /= 2) {
      for (int l = 0; l < half; ++l) v[l] += v[l + half];
    }
    out[m] = v[0];
  }
}

// Each block's lane moments of a chunk ([lane][moment]) into
// blocks[kMoments * b + m].
struct LaneTree {
  double* lanes;
  double* blocks;

  STRATA_HD void operator()(std::int64_t b) const {
    lane_tree(lanes + b * kLanes * kMoments, kMoments, 1, blocks + kMoments * b);
  }
};

}  // namespace strata::kernels::pricing
