// Monte Carlo estimation of a portfolio: plan the samples over ranks and
// chunks, run the kernels on the run's backend, reduce reproducibly.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/backend/backend.hpp"
#include "models/pricing/portfolio.hpp"

namespace strata {
class MpiContext;
class Progress;
}  // namespace strata

namespace strata::pricing {

struct SamplePlan {
  std::int64_t samples = 0;           // antithetic: pairs
  std::int64_t paths = 0;             // paths actually simulated (2 * pairs with antithetic)
  std::int64_t blocks = 0;            // global reduction blocks
  std::int64_t first_block = 0, last_block = 0;   // this rank's
  std::int64_t chunk_blocks = 0;      // blocks per kernel launch
  std::size_t device_bytes = 0;       // working memory on the device per rank
};

SamplePlan plan_samples(const Portfolio& p, const Device& device, const MpiContext& mpi);

struct Estimate {
  double price = 0, standard_error = 0, ci95_low = 0, ci95_high = 0;
  std::int64_t paths = 0;
};

// Moments (sum, sum of squares of x - shift) over n samples -> estimate.
Estimate estimate_from_moments(double shift, double sum, double sum_sq, std::int64_t samples,
                               std::int64_t paths);

// Prices every instrument; collective. progress may be null.
std::vector<Estimate> price_portfolio(const Portfolio& p, const SamplePlan& plan, const Device& device,
                                      Precision precision, const MpiContext& mpi, Progress* progress);

}  // namespace strata::pricing
