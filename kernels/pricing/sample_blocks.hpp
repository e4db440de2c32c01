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

namespace strata::kernels::pricing {

inline constexpr std::int64_t kLanes = 256;
inline constexpr std::int64_t kSamplesPerBlock = 64 * kLanes;   // 16384
inline constexpr int kMoments = 2;                              // sum and sum of squares

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

  STRATA_HD void operator()(std::int64_t i) const {
    const std::int64_t block = first_block + i / kLanes;
    const std::int64_t lane = i % kLanes;
    const std::int64_t begin = block * kSamplesPerBlock;
    std::int64_t end = begin + kSamplesPerBlock;
    if (end > n_samples) end = n_samples;
    double s1 = 0.0, s2 = 0.0;
    for (std::int64_t s = begin + lane; s < end; s += kLanes) {
      const double x = sampler(s) - shift;
      s1 += x;
      s2 += x * x;
    }
    lanes[kMoments * i] = s1;
    lanes[kMoments * i + 1] = s2;
  }
};

// LaneMoments for the host, over a sampler with a batch(first, out) form
// (EuropeanGbm): index g runs over blocks_in_chunk * kLanes / kBatch and
// covers the kBatch consecutive lanes g*kBatch.., which read consecutive
// samples, so one batch() call gives each of them its next sample. Every
// lane still adds its own samples in the same order as in LaneMoments, so
// the moments equal LaneMoments' whenever the sample values are equal.
// Samples past the end of a short last block are computed and dropped:
// each sample's bits never depend on where a chunk or a block ends.
template <class Sampler>
struct LaneMomentsBatched {
  static constexpr int kBatch = Sampler::kBatch;
  static_assert(kLanes % kBatch == 0, "a batch of lanes must not straddle two blocks");

  Sampler sampler;
  std::int64_t first_block;
  std::int64_t n_samples;
  double shift;
  double* lanes;

  void operator()(std::int64_t g) const {
    const std::int64_t i0 = g * kBatch;
    const std::int64_t begin = (first_block + i0 / kLanes) * kSamplesPerBlock;
    std::int64_t end = begin + kSamplesPerBlock;
    if (end > n_samples) end = n_samples;
    double s1[kBatch] = {}, s2[kBatch] = {}, x[kBatch];
    for (std::int64_t s = begin + i0 % kLanes; s < end; s += kLanes) {
      sampler.batch(s, x);
      const std::int64_t live = end - s < kBatch ? end - s : kBatch;
      for (std::int64_t w = 0; w < live; ++w) {
        const double d = x[w] - shift;
        s1[w] += d;
        s2[w] += d * d;
      }
    }
    for (int w = 0; w < kBatch; ++w) {
      lanes[kMoments * (i0 + w)] = s1[w];
      lanes[kMoments * (i0 + w) + 1] = s2[w];
    }
  }
};

// Combines the kLanes lane moments of each block of a chunk by a pairwise
// tree, in place, and writes the block's moments to blocks[kMoments * b + m].
struct LaneTree {
  double* lanes;
  double* blocks;

  STRATA_HD void operator()(std::int64_t b) const {
    double* a = lanes + b * kLanes * kMoments;
    for (std::int64_t half = kLanes / 2; half > 0; half /= 2) {
      for (std::int64_t l = 0; l < half; ++l) {
        for (int m = 0; m < kMoments; ++m) a[kMoments * l + m] += a[kMoments * (l + half) + m];
      }
    }
    for (int m = 0; m < kMoments; ++m) blocks[kMoments * b + m] = a[m];
  }
};

}  // namespace strata::kernels::pricing
